import { Type as T } from '@sinclair/typebox';
import { ProblemSchema, SiteRecordSchema } from '@siteplane/contract';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import { retrySite } from '../../../use-cases/sites/retry-site.js';
import type { RouteDef } from '../../route.js';

/** POST /api/v1/sites/<uuid>/retry (issue 3 item 7): run a failed create or delete again; 202 with the operation. */
export const retrySiteRoute = (deps: UseCaseDeps): RouteDef => ({
  method: 'POST',
  url: '/api/v1/sites/:site/retry',
  operationId: 'retrySite',
  summary: 'Retry a failed create or delete (asynchronously)',
  tag: 'Sites',
  auth: 'write',
  params: { site: 'Site UUID' },
  body: T.Object({}, { additionalProperties: false, description: 'Empty: the retry runs what the site already asked for.' }),
  bodyValidatedByDomain: true,
  bodyOptional: true,
  responses: {
    202: {
      description:
        'Accepted; a `failed` site is `pending` again, a `delete_failed` one `deleting`. Follow the operation; ' +
        'steps that already succeeded are checked and left as they are. While a retry is queued or running, that one.',
      schema: SiteRecordSchema,
    },
    404: { description: 'Unknown, deleted or another tenant’s site', schema: ProblemSchema },
    409: { description: 'The site is not `failed` or `delete_failed` (nothing to retry)', schema: ProblemSchema },
    422: { description: 'The body is not empty', schema: ProblemSchema },
  },
  async handler(req, reply, actor) {
    const record = await retrySite(deps, actor, (req.params as { site: string }).site, req.body);
    reply.status(202).header('Location', `/api/v1/sites/${record.uuid}`);
    return record;
  },
});
