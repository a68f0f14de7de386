/**
 * Turns a provider's failed HTTP answer into a VcsError of the right kind. The rules are the
 * providers' own documentation, shared because their headers do not collide:
 * - GitHub: primary rate limit is 403 or 429 with `x-ratelimit-remaining: 0` and the reset time in
 *   `x-ratelimit-reset` (epoch seconds); a secondary limit is 403/429 with `retry-after` or a message
 *   naming the limit ("wait at least one minute" when no header says otherwise).
 * - GitLab: 429 with `Retry-After` and `RateLimit-Reset` (epoch seconds).
 * - Gitea/Forgejo (behind a rate-limiting proxy): 429 with `Retry-After`.
 * - Bitbucket Cloud: 429, documented without a reset header.
 * A 403 that is not a rate limit means the token lacks access (bad scope, revoked): auth_failed.
 */
import { EgressError, networkFailure } from '../egress/egress-error.js';
import { VcsError } from './provider.js';
import { quote } from './redact.js';

export interface FailedResponse {
  status: number;
  headers: Headers;
  bodyText: string;
}

const SECONDARY_LIMIT_DEFAULT_SECONDS = 60;

export function errorFromResponse(
  provider: string,
  path: string,
  response: FailedResponse,
  secrets: readonly string[],
  nowMs: number,
): VcsError {
  const said = providerMessage(response.bodyText);
  const { status, headers } = response;
  const where = `${status} for ${quote(path, secrets)}${said ? `: ${quote(said, secrets)}` : ''}`;

  if (status === 429 || (status === 403 && isRateLimit(headers, said))) {
    const retryAfter = retryAfterSeconds(headers, nowMs) ?? (status === 403 ? SECONDARY_LIMIT_DEFAULT_SECONDS : undefined);
    const when = retryAfter === undefined ? '' : `; retry in ${retryAfter} s`;
    return new VcsError('rate_limited', `${provider} rate limit reached${when} (${where})`, retryAfter);
  }
  if (status === 401 || status === 403) return new VcsError('auth_failed', `${provider} rejected the credentials (${where})`);
  if (status === 404 || status === 410) return new VcsError('not_found', `${provider} has no such resource (${where})`);
  return new VcsError('provider_error', `${provider} failed (${where})`);
}

/**
 * fetch() threw: the egress policy refused the address, DNS, refused connection, reset, TLS, or
 * our own timeout. Told by kind, never with the socket's message (`connect ECONNREFUSED
 * 10.1.2.3:443`): a tenant's baseUrl must not become a way to map the operator's network.
 */
export function errorFromNetwork(
  provider: string,
  path: string,
  error: unknown,
  timeoutMs: number,
  secrets: readonly string[],
): VcsError {
  const name = error instanceof Error ? error.name : '';
  if (name === 'TimeoutError' || name === 'AbortError') {
    return new VcsError('unreachable', `${provider} did not answer ${quote(path, secrets)} within ${timeoutMs} ms`);
  }
  // global fetch reports the socket error as `cause`; guarded-fetch.ts throws it as is.
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (cause instanceof EgressError && cause.kind === 'target_not_allowed') {
    return new VcsError('target_not_allowed', `${provider} at ${quote(path, secrets)}: ${cause.message}`);
  }
  const failure = networkFailure(cause, provider);
  if (failure?.kind === 'timeout')
    return new VcsError('unreachable', `${provider} did not answer ${quote(path, secrets)} in time`);
  const tls =
    typeof (cause as { code?: unknown })?.code === 'string' && /CERT|TLS|SSL|SELF_SIGNED/.test((cause as { code: string }).code);
  return new VcsError(
    'unreachable',
    `${provider} could not be reached for ${quote(path, secrets)}${tls ? ' (its TLS certificate was not accepted)' : ''}`,
  );
}

function isRateLimit(headers: Headers, said: string): boolean {
  return headers.get('x-ratelimit-remaining') === '0' || headers.has('retry-after') || /rate limit/i.test(said);
}

/** Seconds to wait, from `Retry-After` (seconds or HTTP date) or an epoch-seconds reset header. */
export function retryAfterSeconds(headers: Headers, nowMs: number): number | undefined {
  const retryAfter = headers.get('retry-after');
  if (retryAfter !== null) {
    const seconds = Number(retryAfter);
    if (Number.isFinite(seconds)) return Math.max(0, Math.ceil(seconds));
    const date = Date.parse(retryAfter);
    if (!Number.isNaN(date)) return Math.max(0, Math.ceil((date - nowMs) / 1000));
  }
  const reset = headers.get('x-ratelimit-reset') ?? headers.get('ratelimit-reset');
  if (reset !== null && Number.isFinite(Number(reset))) return Math.max(0, Math.ceil(Number(reset) - nowMs / 1000));
  return undefined;
}

/** The human message in a provider's error body: `message` (GitHub, GitLab, Gitea), `error.message` (Bitbucket). */
function providerMessage(bodyText: string): string {
  try {
    const body: unknown = JSON.parse(bodyText);
    if (body && typeof body === 'object') {
      const { message, error } = body as { message?: unknown; error?: unknown };
      if (typeof message === 'string') return message;
      if (message && typeof message === 'object') return JSON.stringify(message);
      if (typeof error === 'string') return error;
      if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
        return (error as { message: string }).message;
      }
    }
  } catch {
    // not JSON: GitLab's "Retry later", a proxy's HTML page
  }
  return bodyText.length > 0 && !bodyText.trimStart().startsWith('<') ? bodyText : '';
}
