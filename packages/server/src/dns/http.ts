/**
 * The HTTP part the JSON providers share: timeouts, network failures as `unreachable`, status → error
 * kind, and scrubbing credentials out of every message (a provider could echo a key back).
 */
import { DnsError, type DnsErrorKind, type DnsProviderName } from './provider.js';

/** What every HTTP adapter accepts besides credentials. */
export interface HttpAdapterOptions {
  /** API base instead of the provider's own (CLOUDFLARE_API_BASE…, a stand-in in tests). */
  apiBase?: string;
  /** fetch to use; the global one otherwise. */
  fetch?: typeof fetch;
  /** Per request; one that takes longer counts as `unreachable`. Default 30 s. */
  timeoutMs?: number;
  /** How often a rate-limited request is repeated after a short wait before `rate_limited` is thrown. Default 2. */
  rateLimitRetries?: number;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
/**
 * Rate limits asking for at most this wait are waited out inside the adapter (Porkbun allows about one
 * request a second, and a record change takes three); longer ones go back to the caller's job.
 */
export const MAX_ABSORBED_WAIT_SECONDS = 2;

export interface ProviderHttpOptions {
  provider: DnsProviderName;
  /** The provider's own API base, used unless `adapter.apiBase` overrides it. */
  defaultBase: string;
  adapter: HttpAdapterOptions;
  /** Sent with every request (authorization). */
  headers: Record<string, string>;
  /** Values that must never appear in an error message. */
  secrets: string[];
  /** Whether a reply is the provider's "slow down"; status 429 unless told otherwise. */
  isRateLimited?: (reply: HttpReply) => boolean;
  /** Seconds to wait when a rate-limited reply has no Retry-After. */
  retryAfterFallback?: (reply: HttpReply) => number | undefined;
}

export interface HttpReply {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined when the body is not JSON (an HTML error page from a proxy). */
  json: unknown;
  text: string;
}

export class ProviderHttp {
  readonly provider: DnsProviderName;
  private readonly baseUrl: string;
  private readonly fetchFn: typeof fetch;
  private readonly timeoutMs: number;

  constructor(private readonly options: ProviderHttpOptions) {
    this.provider = options.provider;
    this.baseUrl = (options.adapter.apiBase ?? options.defaultBase).replace(/\/+$/, '');
    this.fetchFn = options.adapter.fetch ?? globalThis.fetch;
    this.timeoutMs = options.adapter.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Sends a request; short rate limits are waited out, network failures throw `unreachable`. */
  async request(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<HttpReply> {
    const retries = this.options.adapter.rateLimitRetries ?? 2;
    for (let attempt = 0; ; attempt++) {
      const reply = await this.send(method, path, body);
      if (!this.isRateLimited(reply)) return reply;
      const wait = this.retryAfter(reply);
      if (attempt >= retries || wait === undefined || wait > MAX_ABSORBED_WAIT_SECONDS) return reply;
      await new Promise((resolve) => setTimeout(resolve, wait * 1000));
    }
  }

  /** The usual mapping of a failed reply; adapters handle their special cases before calling it. */
  failure(reply: HttpReply, providerMessage: string | undefined): DnsError {
    const message = providerMessage ? `${providerMessage} (HTTP ${reply.status})` : `HTTP ${reply.status}`;
    if (this.isRateLimited(reply)) return this.error('rate_limited', message, this.retryAfter(reply));
    if (reply.status === 401 || reply.status === 403) return this.error('auth_failed', message);
    return this.error('provider_error', message);
  }

  isRateLimited(reply: HttpReply): boolean {
    return this.options.isRateLimited ? this.options.isRateLimited(reply) : reply.status === 429;
  }

  private retryAfter(reply: HttpReply): number | undefined {
    return retryAfterSeconds(reply.headers) ?? this.options.retryAfterFallback?.(reply);
  }

  private async send(method: 'GET' | 'POST' | 'DELETE', path: string, body: unknown): Promise<HttpReply> {
    const fetchFn = this.fetchFn; // called unbound, as fetch implementations expect
    try {
      const response = await fetchFn(`${this.baseUrl}${path}`, {
        method,
        headers: {
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...this.options.headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.timeoutMs),
        // APIs do not redirect; following one could carry the credentials to another host.
        redirect: 'error',
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, json: parseJson(text), text };
    } catch (error) {
      throw this.error('unreachable', `${method} ${path}: ${networkReason(error, this.timeoutMs)}`);
    }
  }

  /** A DnsError with the provider's name in front and every credential value removed. */
  error(kind: DnsErrorKind, message: string, retryAfter?: number): DnsError {
    return new DnsError(kind, `${this.provider}: ${scrub(message, this.options.secrets)}`, retryAfter);
  }
}

export function scrub(message: string, secrets: readonly string[]): string {
  let out = message;
  for (const secret of secrets) if (secret) out = out.split(secret).join('[redacted]');
  return out;
}

/** Seconds from a Retry-After header (delta seconds or an HTTP date), or undefined. */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function networkReason(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return `no answer within ${timeoutMs} ms`;
  }
  // undici reports "fetch failed" and keeps the reason (ECONNREFUSED, ENOTFOUND…) in `cause`.
  const cause = error instanceof Error ? (error.cause as { code?: string; message?: string } | undefined) : undefined;
  if (cause?.code) return `${cause.code} ${cause.message ?? ''}`.trim();
  return error instanceof Error ? error.message : String(error);
}
