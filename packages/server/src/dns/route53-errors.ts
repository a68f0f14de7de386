/** Route 53 SDK failures → DnsError kinds. The SDK names an error after the `<Code>` Route 53 sent. */
import { scrub } from './http.js';
import { DnsError } from './provider.js';

const THROTTLING = new Set([
  'Throttling',
  'ThrottlingException',
  'PriorRequestNotComplete',
  'TooManyRequestsException',
  'RequestLimitExceeded',
]);
const AUTH = new Set([
  'InvalidClientTokenId',
  'SignatureDoesNotMatch',
  'IncompleteSignature',
  'MissingAuthenticationToken',
  'AccessDenied',
  'AccessDeniedException',
  'UnrecognizedClientException',
  'ExpiredToken',
  'ExpiredTokenException',
]);
const NETWORK = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'TimeoutError',
]);
/**
 * Route 53 sends no Retry-After when it throttles; its documented limit is five requests a second
 * per account, so one second is the window to wait.
 */
const THROTTLE_WAIT_SECONDS = 1;

interface SdkFailure {
  name?: string;
  /** InvalidChangeBatch: typed as `messages` by the model, but the SDK finds no `<Code>` in Route 53's
   * `<InvalidChangeBatch>` document, names the error "Unknown" and keeps the raw `Messages` element. */
  messages?: string[];
  Messages?: { Message?: string | string[] };
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
  $response?: { statusCode?: number; headers?: Record<string, string | undefined> };
}

export function awsError(error: unknown, secrets: readonly string[]): DnsError {
  const e = (typeof error === 'object' && error !== null ? error : {}) as SdkFailure;
  const batch = changeBatchMessages(e);
  const name = batch ? 'InvalidChangeBatch' : (e.name ?? 'Error');
  const status = e.$metadata?.httpStatusCode;
  const detail = scrub(`${name}: ${batch ? batch.join('; ') : (e.message ?? String(error))}`, secrets);
  const message = `aws: ${detail}${status ? ` (HTTP ${status})` : ''}`;
  if (THROTTLING.has(name) || status === 429)
    return new DnsError('rate_limited', message, retryAfter(e) ?? THROTTLE_WAIT_SECONDS);
  if (AUTH.has(name) || status === 401 || status === 403) return new DnsError('auth_failed', message);
  if (status === undefined && (NETWORK.has(e.code ?? '') || NETWORK.has(name))) return new DnsError('unreachable', message);
  return new DnsError('provider_error', message);
}

/**
 * A change batch refused because the set is not what we read (a CREATE of a set that now exists, a
 * DELETE of values that changed). Route 53 answers those with an `<InvalidChangeBatch>` document.
 */
export function isChangeConflict(error: unknown): boolean {
  const messages = changeBatchMessages((typeof error === 'object' && error !== null ? error : {}) as SdkFailure);
  return messages?.some((m) => /but it already exists|but it was not found|values provided do not match/i.test(m)) ?? false;
}

function changeBatchMessages(e: SdkFailure): string[] | undefined {
  if (Array.isArray(e.messages) && e.messages.length > 0) return e.messages;
  const raw = e.Messages?.Message;
  if (raw === undefined) return undefined;
  return Array.isArray(raw) ? raw : [raw];
}

function retryAfter(e: SdkFailure): number | undefined {
  const value = e.$response?.headers?.['retry-after'];
  return value && /^\d+$/.test(value) ? Number(value) : undefined;
}
