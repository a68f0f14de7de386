import type { Static } from '@sinclair/typebox';
import { CreateVcProfileBody, listOf, RepositoryDetailSchema, RepositorySchema, VcProfileSchema } from '@siteplane/contract';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import {
  createVcProfile,
  deleteVcProfile,
  findVcProfile,
  listVcProfiles,
  vcProfileRecord,
} from '../../../use-cases/vc-profiles/manage-vc-profiles.js';
import { getRepository, listRepositories } from '../../../use-cases/vc-profiles/repositories.js';
import type { RouteDef } from '../../route.js';
import { paged } from '../paged.js';

const id = (req: { params: unknown }) => (req.params as { profile: string }).profile;

/** Version control profiles (spec §4.2) plus create and delete (ARCHITECTURE §2). */
export const vcProfileRoutes = (deps: UseCaseDeps): RouteDef[] => [
  {
    method: 'GET',
    url: '/api/v1/vc-profiles',
    summary: 'List version control profiles',
    tag: 'Version control',
    auth: 'read',
    responses: { 200: { description: 'Profiles', schema: listOf(VcProfileSchema) } },
    handler: (req, reply, actor) => paged(req, reply, (page) => listVcProfiles(deps, actor, page)),
  },
  {
    method: 'GET',
    url: '/api/v1/vc-profiles/:profile',
    summary: 'Retrieve one profile',
    tag: 'Version control',
    auth: 'read',
    params: { profile: 'Profile UUID' },
    responses: { 200: { description: 'The profile', schema: VcProfileSchema } },
    handler: async (req, _reply, actor) => vcProfileRecord(await findVcProfile(deps, actor, id(req))),
  },
  {
    method: 'POST',
    url: '/api/v1/vc-profiles',
    summary: 'Add a profile (token checked against the provider)',
    tag: 'Version control',
    auth: 'write',
    body: CreateVcProfileBody,
    responses: { 201: { description: 'The profile (without token)', schema: VcProfileSchema } },
    async handler(req, reply, actor) {
      reply.status(201);
      return createVcProfile(deps, actor, req.body as Static<typeof CreateVcProfileBody>);
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/vc-profiles/:profile',
    summary: 'Delete a profile',
    tag: 'Version control',
    auth: 'write',
    params: { profile: 'Profile UUID' },
    responses: { 204: { description: 'Deleted' } },
    async handler(req, reply, actor) {
      await deleteVcProfile(deps, actor, id(req));
      return reply.status(204).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/vc-profiles/:profile/repos',
    summary: 'The repositories behind a profile',
    tag: 'Version control',
    auth: 'read',
    params: { profile: 'Profile UUID' },
    responses: { 200: { description: 'Every repository, named <owner>/<repo>', schema: listOf(RepositorySchema) } },
    handler: (req, reply, actor) => paged(req, reply, (page) => listRepositories(deps, actor, id(req), page)),
  },
  {
    method: 'GET',
    url: '/api/v1/vc-profiles/:profile/repos/*',
    summary: 'One repository with default_branch and branches',
    tag: 'Version control',
    auth: 'read',
    params: { profile: 'Profile UUID', '*': 'Repository name, URL-encoded (%2F) or with a literal /' },
    responses: { 200: { description: 'The repository', schema: RepositoryDetailSchema } },
    handler: (req, _reply, actor) =>
      getRepository(deps, actor, id(req), decodeURIComponent((req.params as Record<string, string>)['*'] ?? '')),
  },
];
