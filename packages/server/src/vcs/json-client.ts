/**
 * The one place the hosted providers talk HTTP: global fetch with the profile's auth headers and a
 * timeout, answers cached per profile (fresh for a TTL, then revalidated with If-None-Match),
 * identical concurrent requests merged, failures mapped to VcsError, and pages followed to the end.
 */
import { readCappedText } from './body-cap.js';
import { type CachedResponse, HttpCache } from './http-cache.js';
import { errorFromNetwork, errorFromResponse } from './http-errors.js';
import { VcsError } from './provider.js';
import { quote } from './redact.js';

export type FetchLike = typeof fetch;

export interface JsonClientOptions {
  /** Provider name for messages ("GitHub"). */
  provider: string;
  /** API root without trailing slash (`https://api.github.com`, `https://gitlab.example/api/v4`). */
  baseUrl: string;
  /** Auth and content-negotiation headers sent with every request. */
  headers: Record<string, string>;
  /** Values that must never appear in a message (the token, its Basic encoding). */
  secrets: string[];
  fetch?: FetchLike;
  cache?: HttpCache;
  now?: () => number;
  timeoutMs?: number;
}

/**
 * The client of a hosted provider's profile: its API root, auth headers and the secrets to scrub,
 * with the profile's options (fetch, clock, timeout) and a cache of its own.
 */
export function providerClient(
  options: { fetch?: FetchLike; now?: () => number; timeoutMs?: number; cacheTtlMs?: number },
  client: Pick<JsonClientOptions, 'provider' | 'baseUrl' | 'headers' | 'secrets'>,
): JsonClient {
  return new JsonClient({
    ...client,
    fetch: options.fetch,
    now: options.now,
    timeoutMs: options.timeoutMs,
    cache: new HttpCache({ now: options.now, ttlMs: options.cacheTtlMs }),
  });
}

export interface JsonPage extends CachedResponse {
  url: string;
}

/** Headers paging needs, kept with the cached body because a 304 need not repeat them. */
const KEPT_HEADERS = ['link', 'x-next-page'];
/** A provider that keeps announcing pages beyond this is looping, not large. */
const MAX_PAGES = 10_000;
export const DEFAULT_TIMEOUT_MS = 15_000;

export class JsonClient {
  private readonly fetch: FetchLike;
  private readonly cache: HttpCache;
  private readonly now: () => number;
  private readonly timeoutMs: number;
  private readonly base: URL;
  private readonly inFlight = new Map<string, Promise<JsonPage>>();

  constructor(private readonly options: JsonClientOptions) {
    this.fetch = options.fetch ?? globalThis.fetch;
    this.now = options.now ?? Date.now;
    this.cache = options.cache ?? new HttpCache({ now: this.now });
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.base = new URL(`${options.baseUrl.replace(/\/+$/, '')}/`);
  }

  /**
   * GET one JSON document. `revalidate` skips the fresh-cache shortcut (still conditional), for
   * answers that must reflect the provider now, such as checking a token.
   */
  get(pathOrUrl: string, options: { revalidate?: boolean } = {}): Promise<JsonPage> {
    const url = this.resolve(pathOrUrl);
    if (!options.revalidate) {
      const fresh = this.cache.fresh(url);
      if (fresh) return Promise.resolve({ ...fresh, url });
    }
    const pending = this.inFlight.get(url);
    if (pending) return pending;
    const request = this.request(url).finally(() => this.inFlight.delete(url));
    this.inFlight.set(url, request);
    return request;
  }

  /** Every item of a paged list: `items` picks a page's items, `next` names the following page or null. */
  async getAll(first: string, items: (body: unknown) => unknown[], next: (page: JsonPage) => string | null): Promise<unknown[]> {
    const all: unknown[] = [];
    const seen = new Set<string>();
    let target: string | null = first;
    while (target !== null) {
      const page: JsonPage = await this.get(target);
      if (seen.has(page.url) || seen.size >= MAX_PAGES) {
        throw new VcsError(
          'provider_error',
          `${this.options.provider} paging did not end (page ${quote(page.url, this.options.secrets)} again)`,
        );
      }
      seen.add(page.url);
      all.push(...items(page.body));
      target = next(page);
    }
    return all;
  }

  private async request(url: string): Promise<JsonPage> {
    const { provider, secrets } = this.options;
    const path = new URL(url).pathname + new URL(url).search;
    const stale = this.cache.stale(url);
    const headers: Record<string, string> = { ...this.options.headers };
    if (stale?.etag) headers['If-None-Match'] = stale.etag;

    let response: Response;
    let bodyText: string;
    let target = url;
    for (let hop = 0; ; hop++) {
      try {
        const signal = AbortSignal.timeout(this.timeoutMs);
        // Redirects are followed here, not by fetch, so custom auth headers (PRIVATE-TOKEN) never
        // travel to a host outside the API root. GitHub redirects renamed repositories this way.
        response = await this.fetch(target, { method: 'GET', headers, signal, redirect: 'manual' });
        bodyText = await readCappedText(response, () => `${provider} (${quote(path, secrets)})`);
      } catch (error) {
        if (error instanceof VcsError) throw error;
        throw errorFromNetwork(provider, path, error, this.timeoutMs, secrets);
      }
      const location = response.headers.get('location');
      if (response.status < 300 || response.status > 399 || response.status === 304 || location === null) break;
      if (hop >= 3) throw new VcsError('provider_error', `${provider} redirected ${quote(path, secrets)} too often`);
      target = this.resolve(new URL(location, target).href);
    }

    if (response.status === 304 && stale) {
      this.cache.touch(url);
      return { ...stale, url };
    }
    if (!response.ok) {
      throw errorFromResponse(
        provider,
        path,
        { status: response.status, headers: response.headers, bodyText },
        secrets,
        this.now(),
      );
    }
    let body: unknown;
    try {
      body = JSON.parse(bodyText);
    } catch {
      throw new VcsError(
        'provider_error',
        `${provider} answered ${response.status} for ${quote(path, secrets)} with a body that is not JSON`,
      );
    }
    const kept: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = response.headers.get(name);
      if (value !== null) kept[name] = value;
    }
    const entry: CachedResponse = { body, etag: response.headers.get('etag'), headers: kept };
    this.cache.put(url, entry, bodyText.length);
    return { ...entry, url };
  }

  /**
   * Absolute URL for a path below the API root, or a provider-given next link. A link elsewhere
   * is refused: following it would send the profile's token to another host.
   */
  private resolve(pathOrUrl: string): string {
    const url = /^[a-z][a-z0-9+.-]*:/i.test(pathOrUrl) ? new URL(pathOrUrl) : new URL(pathOrUrl.replace(/^\/+/, ''), this.base);
    if (url.origin !== this.base.origin || !url.pathname.startsWith(this.base.pathname)) {
      throw new VcsError(
        'provider_error',
        `${this.options.provider} pointed to ${quote(url.origin + url.pathname, this.options.secrets)}, outside its API root; not followed`,
      );
    }
    return url.href;
  }
}
