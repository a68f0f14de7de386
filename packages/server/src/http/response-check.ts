import type { FieldError } from '@siteplane/contract';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { schemaErrors } from '../domain/schema-errors.js';
import type { RouteDef } from './route.js';

/** An answer that does not match the schema its route documents for that status. */
export interface ResponseMismatch {
  operationId: string;
  method: string;
  url: string;
  status: number;
  errors: FieldError[];
}

/**
 * An onSend hook that checks each JSON answer against the schema the route documents for its
 * status, and reports each mismatch (the tests turn on; the service does not pay for it).
 */
export function responseCheck(route: RouteDef, report: (mismatch: ResponseMismatch) => void) {
  return async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const documented = route.responses[reply.statusCode];
    if (!documented?.schema || (documented.mediaType ?? 'application/json') !== 'application/json') return payload;
    // Streams (server-sent events) are not bodies to check.
    if (typeof payload !== 'string' && !Buffer.isBuffer(payload)) return payload;
    const where = { operationId: route.operationId, method: req.method, url: req.url, status: reply.statusCode };
    let body: unknown;
    try {
      body = JSON.parse(payload.toString());
    } catch {
      report({ ...where, errors: [{ field: '', code: 'invalid_type', message: 'the answer is not JSON' }] });
      return payload;
    }
    const errors = schemaErrors(documented.schema, body, 20);
    if (errors.length) report({ ...where, errors });
    return payload;
  };
}
