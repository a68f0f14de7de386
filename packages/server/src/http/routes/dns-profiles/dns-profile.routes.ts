import type { Static } from '@sinclair/typebox';
import { CreateDnsProfileBody, DnsProfileSchema, listOf } from '@siteplane/contract';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import {
  createDnsProfile,
  deleteDnsProfile,
  getDnsProfile,
  listDnsProfiles,
  verifyDnsProfile,
} from '../../../use-cases/dns-profiles/manage-dns-profiles.js';
import type { RouteDef } from '../../route.js';
import { PAGE_QUERY } from '../page-query.js';
import { paged } from '../paged.js';

const id = (req: { params: unknown }) => (req.params as { profile: string }).profile;

/** DNS profiles: credentials stored encrypted, never returned (ARCHITECTURE §2). */
export const dnsProfileRoutes = (deps: UseCaseDeps): RouteDef[] => [
  {
    method: 'POST',
    url: '/api/v1/dns-profiles',
    operationId: 'createDnsProfile',
    summary: 'Store DNS provider credentials',
    tag: 'DNS profiles',
    auth: 'write',
    body: CreateDnsProfileBody,
    responses: { 201: { description: 'The profile (without credentials)', schema: DnsProfileSchema } },
    async handler(req, reply, actor) {
      reply.status(201);
      return createDnsProfile(deps, actor, req.body as Static<typeof CreateDnsProfileBody>);
    },
  },
  {
    method: 'GET',
    url: '/api/v1/dns-profiles',
    operationId: 'listDnsProfiles',
    query: PAGE_QUERY,
    summary: 'List DNS profiles',
    tag: 'DNS profiles',
    auth: 'read',
    responses: { 200: { description: 'Profiles', schema: listOf(DnsProfileSchema) } },
    handler: (req, reply, actor) => paged(req, reply, (page) => listDnsProfiles(deps, actor, page)),
  },
  {
    method: 'GET',
    url: '/api/v1/dns-profiles/:profile',
    operationId: 'getDnsProfile',
    summary: 'Retrieve a DNS profile',
    tag: 'DNS profiles',
    auth: 'read',
    params: { profile: 'DNS profile UUID' },
    responses: { 200: { description: 'The profile', schema: DnsProfileSchema } },
    handler: (req, _reply, actor) => getDnsProfile(deps, actor, id(req)),
  },
  {
    method: 'DELETE',
    url: '/api/v1/dns-profiles/:profile',
    operationId: 'deleteDnsProfile',
    summary: 'Delete a DNS profile no site uses',
    tag: 'DNS profiles',
    auth: 'write',
    params: { profile: 'DNS profile UUID' },
    responses: { 204: { description: 'Deleted' } },
    async handler(req, reply, actor) {
      await deleteDnsProfile(deps, actor, id(req));
      return reply.status(204).send();
    },
  },
  {
    method: 'POST',
    url: '/api/v1/dns-profiles/:profile/verify',
    operationId: 'verifyDnsProfile',
    summary: 'Check the credentials against the provider',
    tag: 'DNS profiles',
    auth: 'write',
    params: { profile: 'DNS profile UUID' },
    responses: { 200: { description: 'Verified', schema: DnsProfileSchema } },
    handler: (req, _reply, actor) => verifyDnsProfile(deps, actor, id(req)),
  },
];
