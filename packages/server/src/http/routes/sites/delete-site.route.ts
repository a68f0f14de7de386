import { DeleteSiteBody, SiteRecordSchema } from '@siteplane/contract';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import { deleteSite } from '../../../use-cases/sites/delete-site.js';
import type { RouteDef } from '../../route.js';

/** DELETE /api/v1/sites/<uuid> (spec §4.1): 202; deleteDatabase true also drops the database and its user. */
export const deleteSiteRoute = (deps: UseCaseDeps): RouteDef => ({
  method: 'DELETE',
  url: '/api/v1/sites/:site',
  operationId: 'deleteSite',
  summary: 'Delete a site (asynchronously)',
  tag: 'Sites',
  auth: 'write',
  params: { site: 'Site UUID' },
  body: DeleteSiteBody,
  bodyValidatedByDomain: true,
  responses: { 202: { description: 'Accepted; the record goes once the server is clean', schema: SiteRecordSchema } },
  async handler(req, reply, actor) {
    const record = await deleteSite(deps, actor, (req.params as { site: string }).site, req.body);
    reply.status(202).header('Location', `/api/v1/sites/${record.uuid}`);
    return record;
  },
});
