import { Type as T } from '@sinclair/typebox';
import { ProblemSchema, SiteRecordSchema } from '@siteplane/contract';
import type { UseCaseDeps } from '../../../use-cases/deps.js';
import { retrySsl } from '../../../use-cases/ssl/retry-ssl.js';
import type { RouteDef } from '../../route.js';

/** POST /api/v1/sites/<uuid>/ssl (issue 4): issue the site's certificate again; 202 with the `ssl` operation. */
export const retrySslRoute = (deps: UseCaseDeps): RouteDef => ({
  method: 'POST',
  url: '/api/v1/sites/:site/ssl',
  operationId: 'retrySiteSsl',
  summary: "Retry the site's certificate (asynchronously)",
  tag: 'Sites',
  auth: 'write',
  params: { site: 'Site UUID' },
  body: T.Object({}, { additionalProperties: false, description: 'Empty: the certificate follows the site’s settings.' }),
  bodyValidatedByDomain: true,
  bodyOptional: true,
  responses: {
    202: { description: 'Accepted; follow the `ssl` operation, then `ssl.status` of the site', schema: SiteRecordSchema },
    404: { description: 'Unknown, deleted or another tenant’s site', schema: ProblemSchema },
    409: { description: 'The site is not installed', schema: ProblemSchema },
    422: { description: 'The site has no TLS (ssl false), or the body is not empty', schema: ProblemSchema },
    429: {
      description:
        'A temporary name in the operator zone that may not be ordered yet (certificate_retry_limited, ' +
        'zone_certificates_exhausted, team_certificates_exhausted); Retry-After says when',
      schema: ProblemSchema,
    },
  },
  async handler(req, reply, actor) {
    const record = await retrySsl(deps, actor, (req.params as { site: string }).site, req.body);
    reply.status(202).header('Location', `/api/v1/sites/${record.uuid}`);
    return record;
  },
});
