/**
 * Per-profile memory of provider responses, so listing twice does not spend the rate limit twice.
 *
 * An entry is *fresh* for `ttlMs` after it was fetched or revalidated: it is served without asking
 * the provider. After that it is *stale*: if it carries an ETag the client asks again with
 * `If-None-Match`, and a 304 (which GitHub does not count against the rate limit) revives it.
 * Entries live in memory only; one cache belongs to one profile's provider, so one tenant's token
 * never answers another's request.
 */
export interface CachedResponse {
  /** Parsed JSON body of the last 200 answer. */
  body: unknown;
  /** ETag of that answer, sent back as If-None-Match; null when the provider gave none. */
  etag: string | null;
  /** Response headers kept for paging (`link`, `x-next-page`), since a 304 need not repeat them. */
  headers: Record<string, string>;
}

interface Entry extends CachedResponse {
  storedAt: number;
  /** Size of the body as received, for the byte budget. */
  bytes: number;
}

export interface HttpCacheOptions {
  /** Milliseconds since the epoch; injectable so tests move time instead of waiting. */
  now?: () => number;
  /** How long an answer is served without asking the provider. */
  ttlMs?: number;
  /** Bound on remembered URLs; the oldest is forgotten first. */
  maxEntries?: number;
  /** Bound on remembered bodies (GitHub's repository objects run to several KB each). */
  maxBytes?: number;
}

export const DEFAULT_CACHE_TTL_MS = 30_000;

export class HttpCache {
  private readonly entries = new Map<string, Entry>();
  private readonly now: () => number;
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly maxBytes: number;
  private bytes = 0;

  constructor(options: HttpCacheOptions = {}) {
    this.now = options.now ?? Date.now;
    this.ttlMs = options.ttlMs ?? DEFAULT_CACHE_TTL_MS;
    this.maxEntries = options.maxEntries ?? 2_000;
    this.maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
  }

  /** The entry if it is still fresh. */
  fresh(url: string): CachedResponse | undefined {
    const entry = this.entries.get(url);
    return entry && this.now() - entry.storedAt < this.ttlMs ? entry : undefined;
  }

  /** The entry whatever its age, for revalidation with its ETag. */
  stale(url: string): CachedResponse | undefined {
    return this.entries.get(url);
  }

  /** Remembers an answer; `bytes` is its body's size as received. */
  put(url: string, response: CachedResponse, bytes: number): void {
    this.forget(url); // re-insert so Map order stays oldest-first
    this.entries.set(url, { body: response.body, etag: response.etag, headers: response.headers, storedAt: this.now(), bytes });
    this.bytes += bytes;
    while (this.entries.size > this.maxEntries || (this.bytes > this.maxBytes && this.entries.size > 1)) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.forget(oldest);
    }
  }

  /** Marks a stale entry fresh again after the provider answered 304. */
  touch(url: string): void {
    const entry = this.entries.get(url);
    if (entry) this.put(url, entry, entry.bytes);
  }

  private forget(url: string): void {
    const entry = this.entries.get(url);
    if (!entry) return;
    this.bytes -= entry.bytes;
    this.entries.delete(url);
  }
}

/** A small time-bounded memo for results that are not HTTP responses (git ls-remote output). */
export class TtlMemo<V> {
  private readonly entries = new Map<string, { value: V; storedAt: number }>();
  private readonly now: () => number;
  private readonly ttlMs: number;

  constructor(options: { now?: () => number; ttlMs?: number } = {}) {
    this.now = options.now ?? Date.now;
    this.ttlMs = options.ttlMs ?? DEFAULT_CACHE_TTL_MS;
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (this.now() - entry.storedAt < this.ttlMs) return entry.value;
    this.entries.delete(key);
    return undefined;
  }

  set(key: string, value: V): void {
    this.entries.set(key, { value, storedAt: this.now() });
  }
}
