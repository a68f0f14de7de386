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
import { parseRepoPageQuery } from '../../../use-cases/vc-profiles/repo-paging.js';
import { getRepository, listRepositories } from '../../../use-cases/vc-profiles/repositories.js';
import { QueryError } from '../../query-error.js';
import type { RouteDef } from '../../route.js';
import { setNextLink } from '../link-header.js';
import { PAGE_QUERY } from '../page-query.js';
import { paged } from '../paged.js';

const id = (req: { params: unknown }) => (req.params as { profile: string }).profile;

/** Version control profiles (spec §4.2) plus create and delete (ARCHITECTURE §2). */
export const vcProfileRoutes = (deps: UseCaseDeps): RouteDef[] => [
  {
    method: 'GET',
    url: '/api/v1/vc-profiles',
    operationId: 'listVcProfiles',
    query: PAGE_QUERY,
    summary: 'List version control profiles',
    tag: 'Version control',
    auth: 'read',
    responses: { 200: { description: 'Profiles', schema: listOf(VcProfileSchema) } },
    handler: (req, reply, actor) => paged(req, reply, (page) => listVcProfiles(deps, actor, page)),
  },
  {
    method: 'GET',
    url: '/api/v1/vc-profiles/:profile',
    operationId: 'getVcProfile',
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
    operationId: 'createVcProfile',
    summary: 'Add a profile (token checked against the provider)',
    tag: 'Version control',
    auth: 'write',
    body: CreateVcProfileBody,
    responses: {
      201: { description: 'The profile (without token)', schema: VcProfileSchema },
      422: { description: 'validation_failed: every violated rule, including a token or remote the provider refused' },
      429: PROVIDER_FAILURES[429],
      502: PROVIDER_FAILURES[502],
      503: PROVIDER_FAILURES[503],
    },
    async handler(req, reply, actor) {
      reply.status(201);
      return createVcProfile(deps, actor, req.body as Static<typeof CreateVcProfileBody>);
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/vc-profiles/:profile',
    operationId: 'deleteVcProfile',
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
    operationId: 'listRepositories',
    summary: 'The repositories behind a profile',
    tag: 'Version control',
    auth: 'read',
    params: { profile: 'Profile UUID' },
    query: PAGE_QUERY,
    responses: {
      200: {
        description: 'Every repository, named <owner>/<repo>, ordered by name, cursor-paged',
        schema: listOf(RepositorySchema),
      },
      ...PROVIDER_FAILURES,
    },
    async handler(req, reply, actor) {
      const page = QueryError.wrap(() => parseRepoPageQuery(req.query as { limit?: string; cursor?: string }));
      const list = await listRepositories(deps, actor, id(req), page);
      setNextLink(req, reply, list.meta.next_cursor);
      return list;
    },
  },
  {
    method: 'GET',
    url: '/api/v1/vc-profiles/:profile/repos/*',
    operationId: 'getRepository',
    summary: 'One repository with default_branch and branches',
    tag: 'Version control',
    auth: 'read',
    params: { profile: 'Profile UUID', '*': 'Repository name, URL-encoded (%2F) or with a literal /' },
    responses: {
      200: { description: 'The repository', schema: RepositoryDetailSchema },
      404: { description: 'No such profile (not_found) or repository (repository_not_found)' },
      ...PROVIDER_FAILURES,
    },
    // The router has already percent-decoded the name once; decoding again would turn `%252F`
    // into a slash and throw on a lone `%`. A trailing slash (`acme/api/`) names the same repository.
    handler: (req, _reply, actor) =>
      getRepository(deps, actor, id(req), ((req.params as Record<string, string>)['*'] ?? '').replace(/\/+$/, '')),
  },
];

/** How a provider's failure answers (use-cases/vc-profiles/vcs-errors.ts); each a problem+json. */
const PROVIDER_FAILURES = {
  424: { description: "provider_auth_failed: the provider rejected the profile's token; replace the profile" },
  429: {
    description: 'provider_rate_limited: the provider rate-limited the profile',
    headers: { 'Retry-After': "Seconds until the provider's limit resets" },
  },
  502: { description: 'provider_error: the provider failed or answered with something unreadable' },
  503: { description: 'provider_unreachable: the provider could not be reached or did not answer in time' },
};
