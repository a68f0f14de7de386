import { CreatedSiteSchema, CreateSiteBody, ProblemSchema } from '@siteplane/contract';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import { createSite } from '../../../use-cases/sites/create-site.js';
import type { RouteDef } from '../../route.js';

/** POST /api/v1/sites (spec §4.1): one path for every type; 202 once site, operation and job are committed. */
export const createSiteRoute = (deps: UseCaseDeps): RouteDef => ({
  method: 'POST',
  url: '/api/v1/sites',
  operationId: 'createSite',
  summary: 'Create a site of any application type',
  tag: 'Sites',
  auth: 'write',
  body: CreateSiteBody,
  bodyValidatedByDomain: true,
  responses: {
    202: {
      description: 'Accepted; the site is provisioned asynchronously. Includes domain and free_domain_base.',
      schema: CreatedSiteSchema,
      headers: { Location: 'The site URL' },
    },
    422: { description: 'A rule of the interface was broken; every violation is listed', schema: ProblemSchema },
  },
  async handler(req, reply, actor) {
    const created = await createSite(deps, actor, req.body);
    reply.status(202).header('Location', `/api/v1/sites/${created.record.uuid}`);
    return created.generatedDatabasePassword
      ? { ...created.record, generated_database_password: created.generatedDatabasePassword }
      : created.record;
  },
});
