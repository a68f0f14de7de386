import type { Static } from '@sinclair/typebox';
import { CreateServerBody, CreateServerUserBody, listOf, ServerRecordSchema, ServerUserSchema } from '@siteplane/contract';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import { createServer, deleteServer, findServer, listServers, verifyServer } from '../../../use-cases/servers/manage-servers.js';
import { serverRecord } from '../../../use-cases/servers/server-record.js';
import { createServerUser, listServerUsers } from '../../../use-cases/servers/server-users.js';
import type { RouteDef } from '../../route.js';
import { PAGE_QUERY } from '../page-query.js';
import { paged } from '../paged.js';

const id = (req: { params: unknown }) => (req.params as { server: string }).server;

/** The admin surface for servers and their users (ARCHITECTURE §2), beyond the spec. */
export const serverRoutes = (deps: UseCaseDeps): RouteDef[] => [
  {
    method: 'POST',
    url: '/api/v1/servers',
    operationId: 'createServer',
    summary: 'Register a server (ssh, local or dry-run)',
    tag: 'Servers',
    auth: 'write',
    body: CreateServerBody,
    responses: {
      201: { description: 'The server, with the public key to authorise on it', schema: ServerRecordSchema },
      422: {
        description:
          'ip target_not_allowed: an ssh server whose address (or a name resolving to one) is neither public nor in SITEPLANE_ALLOWED_TARGETS; ' +
          'connection local_server_disabled: `local` while SITEPLANE_LOCAL_SERVER is off',
      },
    },
    async handler(req, reply, actor) {
      const server = await createServer(deps, actor, req.body as Static<typeof CreateServerBody>);
      reply.status(201).header('Location', `/api/v1/servers/${server.uuid}`);
      return server;
    },
  },
  {
    method: 'GET',
    url: '/api/v1/servers',
    operationId: 'listServers',
    query: PAGE_QUERY,
    summary: 'List servers',
    tag: 'Servers',
    auth: 'read',
    responses: { 200: { description: 'Servers', schema: listOf(ServerRecordSchema) } },
    handler: (req, reply, actor) => paged(req, reply, (page) => listServers(deps, actor, page)),
  },
  {
    method: 'GET',
    url: '/api/v1/servers/:server',
    operationId: 'getServer',
    summary: 'Retrieve a server',
    tag: 'Servers',
    auth: 'read',
    params: { server: 'Server UUID' },
    responses: { 200: { description: 'The server', schema: ServerRecordSchema } },
    handler: async (req, _reply, actor) => serverRecord(await findServer(deps, actor, id(req))),
  },
  {
    method: 'DELETE',
    url: '/api/v1/servers/:server',
    operationId: 'deleteServer',
    summary: 'Remove a server without sites',
    tag: 'Servers',
    auth: 'write',
    params: { server: 'Server UUID' },
    responses: { 204: { description: 'Removed' }, 409: { description: 'The server still has sites' } },
    async handler(req, reply, actor) {
      await deleteServer(deps, actor, id(req));
      return reply.status(204).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/servers/:server/verify',
    operationId: 'verifyServer',
    summary: 'Connect, pin the host key and record the facts',
    tag: 'Servers',
    auth: 'write',
    params: { server: 'Server UUID' },
    responses: {
      200: { description: 'The verified server', schema: ServerRecordSchema },
      422: {
        description: 'target_not_allowed: the address resolves to one the egress policy refuses (checked at every connect)',
      },
      502: { description: 'target_unreachable: the server could not be reached' },
      504: { description: 'target_timeout: the server did not answer in time' },
    },
    handler: (req, _reply, actor) => verifyServer(deps, actor, id(req)),
  },
  {
    method: 'POST',
    url: '/api/v1/servers/:server/users',
    operationId: 'createServerUser',
    summary: 'Add a server user (owner of sites)',
    tag: 'Servers',
    auth: 'write',
    params: { server: 'Server UUID' },
    body: CreateServerUserBody,
    responses: { 201: { description: 'The user', schema: ServerUserSchema } },
    async handler(req, reply, actor) {
      reply.status(201);
      return createServerUser(deps, actor, id(req), (req.body as { username: string }).username);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/servers/:server/users',
    operationId: 'listServerUsers',
    query: PAGE_QUERY,
    summary: 'List server users',
    tag: 'Servers',
    auth: 'read',
    params: { server: 'Server UUID' },
    responses: { 200: { description: 'Users', schema: listOf(ServerUserSchema) } },
    handler: (req, reply, actor) => paged(req, reply, (page) => listServerUsers(deps, actor, id(req), page)),
  },
];
