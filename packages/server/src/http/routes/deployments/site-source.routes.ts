import type { Static } from '@sinclair/typebox';
import { DeployKeyRemovalSchema, listOf, ProblemSchema, PutSiteSourceBody, SiteSourceSchema } from '@siteplane/contract';
import { listDeployKeyRemovals } from '../../../use-cases/deployments/provider-deploy-key.js';
import { getSiteSource, putSiteSource, unbindSiteSource } from '../../../use-cases/deployments/site-source.js';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import type { RouteDef } from '../../route.js';
import { assertMatches } from '../../validate-schema.js';
import { paged } from '../paged.js';

const site = (req: { params: unknown }) => (req.params as { site: string }).site;

const NOT_DEPLOYABLE = {
  description: 'not_deployable: the site’s type is not deployed from code (the reason is given)',
  schema: ProblemSchema,
};

/** A site's source: the repository it deploys from (GET, PUT, DELETE /api/v1/sites/<uuid>/source). */
export const siteSourceRoutes = (deps: UseCaseDeps): RouteDef[] => [
  {
    method: 'GET',
    url: '/api/v1/sites/:site/source',
    operationId: 'getSiteSource',
    summary: 'The repository a site deploys from',
    tag: 'Deployments',
    auth: 'read',
    params: { site: 'Site UUID' },
    responses: {
      200: { description: 'The source (no token or private key)', schema: SiteSourceSchema },
      404: { description: 'Unknown site, or a site without source (artifact uploads only)', schema: ProblemSchema },
      422: NOT_DEPLOYABLE,
    },
    handler: (req, _reply, actor) => getSiteSource(deps, actor, site(req)),
  },
  {
    method: 'PUT',
    url: '/api/v1/sites/:site/source',
    operationId: 'setSiteSource',
    summary: 'Bind a site to a repository (or null to unbind)',
    tag: 'Deployments',
    auth: 'write',
    params: { site: 'Site UUID' },
    body: PutSiteSourceBody,
    // `null` unbinds; anything else is checked against the schema in the handler.
    bodyValidatedByDomain: true,
    responses: {
      200: {
        description:
          'The source. The repository and branch were checked through the profile. With access deploy_key (hosted providers) the key is registered read-only at the provider, or deploy_key_registration says why not (the token may not manage deploy keys) and deploy_public_key is to be added by hand; a plain git profile’s ssh remote always needs deploy_public_key added by hand.',
        schema: SiteSourceSchema,
      },
      204: {
        description:
          'Unbound (body null): the site deploys by artifact upload only; a key Siteplane registered at the provider is removed there (best effort, recorded)',
      },
      422: {
        description:
          'validation_failed naming vcProfile, repository, branch or access (not_applicable for a plain git profile); not_deployable for the site’s type',
        schema: ProblemSchema,
      },
      424: { description: 'provider_auth_failed: the provider refused the profile’s token', schema: ProblemSchema },
      429: {
        description: 'provider_rate_limited',
        schema: ProblemSchema,
        headers: { 'Retry-After': 'Seconds until the provider’s limit resets' },
      },
      502: {
        description: 'provider_error: the provider answered something unreadable (or gave no ssh clone address)',
        schema: ProblemSchema,
      },
      503: { description: 'provider_unreachable', schema: ProblemSchema },
    },
    async handler(req, reply, actor) {
      if (req.body === null || req.body === undefined) {
        await unbindSiteSource(deps, actor, site(req));
        return reply.status(204).send();
      }
      assertMatches(PutSiteSourceBody, req.body);
      return putSiteSource(deps, actor, site(req), req.body as Static<typeof PutSiteSourceBody>);
    },
  },
  {
    method: 'DELETE',
    url: '/api/v1/sites/:site/source',
    operationId: 'unbindSiteSource',
    summary: 'Unbind a site from its repository',
    tag: 'Deployments',
    auth: 'write',
    params: { site: 'Site UUID' },
    responses: {
      204: {
        description:
          'Unbound; the site’s deploy key is forgotten, and removed at the provider when Siteplane registered it there (best effort, recorded)',
      },
      422: NOT_DEPLOYABLE,
    },
    async handler(req, reply, actor) {
      await unbindSiteSource(deps, actor, site(req));
      return reply.status(204).send();
    },
  },
  {
    method: 'GET',
    url: '/api/v1/sites/:site/source/deploy-key-removals',
    operationId: 'listDeployKeyRemovals',
    summary: 'Removals of the site’s deploy keys at providers (on unbind or re-bind), each with its outcome',
    tag: 'Deployments',
    auth: 'read',
    params: { site: 'Site UUID' },
    responses: {
      200: {
        description: 'Oldest first; a failed one names the key still at the provider, to remove by hand',
        schema: listOf(DeployKeyRemovalSchema),
      },
      404: { description: 'Unknown site', schema: ProblemSchema },
      422: NOT_DEPLOYABLE,
    },
    handler: (req, reply, actor) => paged(req, reply, (page) => listDeployKeyRemovals(deps, actor, site(req), page)),
  },
];
