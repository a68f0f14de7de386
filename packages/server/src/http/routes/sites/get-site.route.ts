import { ProblemSchema, SiteRecordSchema } from '@siteplane/contract';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import { getSiteJson } from '../../../use-cases/sites/read-sites.js';
import { JSON_MEDIA_TYPE, type RouteDef } from '../../route.js';

export const getSiteRoute = (deps: UseCaseDeps): RouteDef => ({
  method: 'GET',
  url: '/api/v1/sites/:site',
  operationId: 'getSite',
  summary: 'Retrieve one site',
  tag: 'Sites',
  auth: 'read',
  params: { site: 'Site UUID' },
  responses: {
    200: { description: 'The site', schema: SiteRecordSchema },
    404: { description: 'Unknown, deleted or another tenant’s site', schema: ProblemSchema },
  },
  handler: async (req, reply, actor) =>
    reply.type(JSON_MEDIA_TYPE).send(await getSiteJson(deps, actor, (req.params as { site: string }).site)),
});
