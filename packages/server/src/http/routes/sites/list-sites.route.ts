import { Type } from '@sinclair/typebox';
import { listOf, SiteRecordSchema } from '@siteplane/contract';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import { parsePageQuery } from '../../../use-cases/pagination.js';
import { listSitesJson } from '../../../use-cases/sites/read-sites.js';
import { QueryError } from '../../query-error.js';
import { JSON_MEDIA_TYPE, type RouteDef } from '../../route.js';
import { setNextLink } from '../link-header.js';

export const listSitesRoute = (deps: UseCaseDeps): RouteDef => ({
  method: 'GET',
  url: '/api/v1/sites',
  operationId: 'listSites',
  summary: 'List the sites on a server',
  tag: 'Sites',
  auth: 'read',
  query: Type.Object({
    server: Type.String({ format: 'uuid' }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500 })),
    cursor: Type.Optional(Type.String()),
  }),
  responses: { 200: { description: 'Sites, oldest first, cursor-paged', schema: listOf(SiteRecordSchema) } },
  async handler(req, reply, actor) {
    const query = req.query as { server?: string; limit?: string; cursor?: string };
    const list = await QueryError.wrapAsync(async () => listSitesJson(deps, actor, query, () => parsePageQuery(query)));
    setNextLink(req, reply, list.nextCursor);
    return reply.type(JSON_MEDIA_TYPE).send(list.body);
  },
});
