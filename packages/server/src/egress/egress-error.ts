/**
 * How a connection to a tenant-chosen target failed, as a stable kind with a fixed message. The
 * socket's own message (`connect ECONNREFUSED 10.1.2.3:22`, `getaddrinfo ENOTFOUND db.internal`)
 * is never passed on: repeated over many addresses it would map the operator's network.
 */
export type EgressFailure = 'target_not_allowed' | 'unreachable' | 'timeout';

export class EgressError extends Error {
  constructor(
    readonly kind: EgressFailure,
    message: string,
  ) {
    super(message);
    this.name = 'EgressError';
  }
}

const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ESOCKETTIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT', 'ABORT_ERR']);
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENONET',
  'EADDRNOTAVAIL',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_FAIL',
  'EAI_NODATA',
  'EAI_NONAME',
]);

/**
 * The kind of a socket-level failure, or null when `error` is something else (a refused login, a
 * TLS certificate, a bug): those keep their own meaning. `what` names the target in the message.
 */
export function networkFailure(error: unknown, what: string): EgressError | null {
  if (error instanceof EgressError) return error;
  if (!(error instanceof Error)) return null;
  const { code, level } = error as { code?: unknown; level?: unknown };
  if (
    error.name === 'TimeoutError' ||
    error.name === 'AbortError' ||
    level === 'client-timeout' ||
    TIMEOUT_CODES.has(String(code))
  ) {
    return new EgressError('timeout', `${what} did not answer in time`);
  }
  if (UNREACHABLE_CODES.has(String(code)) || level === 'client-socket' || (error as { errors?: unknown }).errors) {
    return new EgressError('unreachable', `${what} could not be reached`);
  }
  return null;
}
