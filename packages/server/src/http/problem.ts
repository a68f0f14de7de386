import { ERROR_CODES, type ErrorCode, type FieldError, type Problem } from '@siteplane/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Status of every stable code: the only place codes meet HTTP (ARCHITECTURE §4). */
export const STATUS_OF: Record<ErrorCode, number> = {
  malformed_json: 400,
  invalid_query: 400,
  unsupported_media_type: 415,
  body_too_large: 413,
  validation_failed: 422,
  idempotency_key_reused: 422,
  idempotency_key_in_progress: 409,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  route_not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  rate_limited: 429,
  // Like the spec's other limits (one per server, uniqueness): a 422 the client fixes by deleting a record.
  quota_exceeded: 422,
  not_implemented: 501,
  internal: 500,
  upstream_unavailable: 502,
  upstream_auth_failed: 502,
  upstream_rate_limited: 429,
  upstream_not_found: 404,
  upstream_error: 502,
  // A 4xx: the client must replace the profile's token; 401 would blame the Siteplane token.
  provider_auth_failed: 424,
  provider_rate_limited: 429,
  provider_unreachable: 503,
  provider_error: 502,
  repository_not_found: 404,
  // The tenant chose the target: a 422 they fix by choosing another.
  target_not_allowed: 422,
  target_unreachable: 502,
  target_timeout: 504,
  // Nothing to fix in the request: the same request succeeds after Retry-After.
  certificate_retry_limited: 429,
  zone_certificates_exhausted: 429,
  team_certificates_exhausted: 429,
  // The site's type or state is what is wrong: a 422 the client fixes by changing the request.
  not_deployable: 422,
  source_missing: 422,
  no_rollback_target: 422,
  invalid_artifact: 422,
  // The deployment moved on; reading it again shows where.
  deployment_finished: 409,
};

export function problem(req: FastifyRequest, code: ErrorCode, detail?: string, errors?: FieldError[]): Problem {
  const status = STATUS_OF[code];
  return {
    type: `https://siteplane.dev/problems/${code.replace(/_/g, '-')}`,
    title: ERROR_CODES[code],
    status,
    detail: detail ?? ERROR_CODES[code],
    code,
    ...(errors ? { errors } : {}),
    request_id: String(req.id),
  };
}

export function sendProblem(req: FastifyRequest, reply: FastifyReply, code: ErrorCode, detail?: string, errors?: FieldError[]) {
  const body = problem(req, code, detail, errors);
  return reply.status(body.status).type('application/problem+json').send(JSON.stringify(body));
}
