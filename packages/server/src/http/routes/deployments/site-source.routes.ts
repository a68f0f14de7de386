import type { Static } from '@sinclair/typebox';
import { ProblemSchema, PutSiteSourceBody, SiteSourceSchema } from '@siteplane/contract';
import { getSiteSource, putSiteSource, unbindSiteSource } from '../../../use-cases/deployments/site-source.js';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import type { RouteDef } from '../../route.js';
import { assertMatches } from '../../validate-schema.js';

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
          'The source. The repository and branch were checked through the profile. For an ssh remote, add deploy_public_key to the repository as a read-only deploy key.',
        schema: SiteSourceSchema,
      },
      204: { description: 'Unbound (body null): the site deploys by artifact upload only' },
      422: {
        description: 'validation_failed naming vcProfile, repository or branch; not_deployable for the site’s type',
        schema: ProblemSchema,
      },
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
    responses: { 204: { description: 'Unbound; the site’s deploy key is forgotten' }, 422: NOT_DEPLOYABLE },
    async handler(req, reply, actor) {
      await unbindSiteSource(deps, actor, site(req));
      return reply.status(204).send();
    },
  },
];
