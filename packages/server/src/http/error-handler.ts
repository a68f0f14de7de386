import type { FastifyError, FastifyInstance } from 'fastify';
import { DomainError } from '../domain/errors.js';
import { ValidationError } from '../domain/field-errors.js';
import { MalformedJson } from './malformed-json.js';
import { sendProblem } from './problem.js';
import { QueryError } from './query-error.js';

/** Every error becomes problem+json with a stable code; a 5xx never carries internals. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, req, reply) => {
    if (error instanceof QueryError)
      return sendProblem(req, reply, 'invalid_query', 'A query parameter is invalid.', error.errors);
    if (error instanceof ValidationError) {
      return sendProblem(req, reply, 'validation_failed', `${error.errors.length} field(s) are invalid.`, error.errors);
    }
    if (error instanceof MalformedJson) return sendProblem(req, reply, 'malformed_json', error.message);
    if (error instanceof DomainError) {
      if (error.details.retryAfterSeconds !== undefined) reply.header('Retry-After', String(error.details.retryAfterSeconds));
      return sendProblem(req, reply, error.code, error.message);
    }
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return sendProblem(req, reply, 'body_too_large', 'The body is larger than 1 MiB.');
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return sendProblem(req, reply, 'unsupported_media_type', 'Send request bodies as application/json.');
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
        return sendProblem(req, reply, 'malformed_json', 'The body is not valid JSON.');
    }
    if (error.statusCode === 400 && error instanceof SyntaxError)
      return sendProblem(req, reply, 'malformed_json', 'The body is not valid JSON.');
    req.log.error({ err: error }, 'unhandled error');
    return sendProblem(req, reply, 'internal', 'The service failed to handle the request; it is logged with this request id.');
  });
  app.setNotFoundHandler((req, reply) =>
    sendProblem(req, reply, 'route_not_found', `No endpoint ${req.method} ${req.url.split('?')[0]}.`),
  );
}
