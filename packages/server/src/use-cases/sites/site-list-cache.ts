/**
 * Serialised site reads, so the hottest reads skip the database and JSON work (NOTES: cached bytes
 * reach ~1x raw node:http; querying 20 rows per request reached 0.15x): the site lists per server
 * and each single site (GET /sites/<uuid>), both keyed under the site's server. Every write this
 * process makes that changes a server's sites — create, delete, each status change of a job —
 * calls `invalidate(server)`, which drops that server's lists and sites alike.
 *
 * Several processes on one PostgreSQL: the writes of the others are seen through the shared
 * version, a counter per server that the database bumps in the writing transaction itself
 * (migration 012's triggers). Each read takes a stamp (this process's version, then the shared
 * one, read from the database) before it looks at the cache or the tables; an entry is served only
 * under the shared version it was built under. Why this and not a notification (LISTEN/NOTIFY,
 * storage/change-notifier.ts): a notification reaches the other processes some time after the
 * commit, with nothing to say when, so a client that got its 202 from API 1 and asks API 2 at
 * once could be served the old list, even if API 1 waited for its NOTIFY before answering. The
 * counter is read after the request arrived, so it already counts every write acknowledged before;
 * a list read after that stamp is at least as new as the stamp, so storing it under the stamp is
 * safe; if a write commits in between, the counter has moved on and the entry is never served.
 * Costs one primary-key read per list on PostgreSQL (instead of three queries and serialising).
 */

export interface SiteListStamp {
  readonly local: number;
  readonly shared: string;
}

/** The shared version of a server's list (null: one process, nothing shared). */
export type SharedListVersion = ((server: string) => Promise<string>) | null;

/**
 * Taken before a single site is read. Its server, once seen, keys the check like a list's stamp;
 * before that, this process's generation (any invalidation) guards it — in one process only: with
 * a shared version and no server known there is nothing to check against, so nothing is stored.
 */
export interface SiteStamp {
  readonly server: string | null;
  readonly generation: number;
  readonly stamp: SiteListStamp | null;
}

export class SiteListCache {
  private readonly entries = new Map<string, Entry>();
  private readonly keysByServer = new Map<string, Set<string>>();
  /** Bumped by every invalidation: a list read before a change must not be stored after it. */
  private readonly versions = new Map<string, number>();
  /** Bumped by every invalidation of any server: guards a site read whose server is not yet known. */
  private generation = 0;
  /** A site's server never changes, so once seen it keys the site's version check. */
  private readonly serverOfSite = new Map<string, string>();
  private bytes = 0;

  /**
   * `maxBytes` bounds the cached bodies (their bytes, plus ~2 bytes a character of the keys); past it everything is dropped and
   * rebuilt. 16 MiB (it was 64): the process's resident memory target is 150 MB on a service that
   * starts at ~100 MB, and a hot list or site is rebuilt on its next read anyway.
   */
  constructor(
    readonly enabled: boolean,
    private readonly sharedVersion: SharedListVersion = null,
    private readonly maxBytes = 16 * 1024 * 1024,
  ) {}

  /**
   * Taken before the cache and the tables are read (this process's version first, then the shared
   * one). Synchronous in one process, so the hot path of SQLite awaits nothing for it.
   */
  stamp(server: string): SiteListStamp | Promise<SiteListStamp> {
    const local = this.version(server);
    if (!this.enabled || !this.sharedVersion) return { local, shared: '' };
    return this.sharedVersion(server).then((shared) => ({ local, shared }));
  }

  get(
    server: string,
    query: string,
    teams: readonly string[],
    stamp: SiteListStamp,
  ): { body: Buffer; link: string | null } | undefined {
    if (!this.enabled) return undefined;
    const hit = this.entries.get(`${server}?${query}`);
    return hit && hit.shared === stamp.shared && teams.includes(hit.team) ? hit : undefined;
  }

  version(server: string): number {
    return this.versions.get(server) ?? 0;
  }

  set(server: string, query: string, entry: { team: string; body: Buffer; link: string | null }, stamp: SiteListStamp): void {
    if (!this.enabled || this.version(server) !== stamp.local) return;
    this.store(server, `${server}?${query}`, { ...entry, shared: stamp.shared });
  }

  /** Taken before reading a single site (synchronous in one process). */
  siteStamp(site: string): SiteStamp | Promise<SiteStamp> {
    const server = this.serverOfSite.get(site) ?? null;
    const generation = this.generation;
    if (!this.enabled || server === null) return { server, generation, stamp: null };
    const taken = this.stamp(server);
    return taken instanceof Promise
      ? taken.then((stamp) => ({ server, generation, stamp }))
      : { server, generation, stamp: taken };
  }

  /** The site's record as JSON text, when one of the caller's teams owns it and it is cached under this stamp. */
  getSite(site: string, teams: readonly string[], readAt: SiteStamp): Buffer | undefined {
    if (!this.enabled || (readAt.stamp === null && this.sharedVersion)) return undefined;
    const hit = this.entries.get(siteKey(site));
    if (!hit || !teams.includes(hit.team)) return undefined;
    return readAt.stamp === null || hit.shared === readAt.stamp.shared ? hit.body : undefined;
  }

  setSite(site: string, server: string, entry: { team: string; body: Buffer }, readAt: SiteStamp): void {
    if (!this.enabled) return;
    if (this.serverOfSite.size >= 50_000) this.serverOfSite.clear();
    this.serverOfSite.set(site, server);
    const unchanged =
      readAt.stamp !== null
        ? readAt.server === server && this.version(server) === readAt.stamp.local
        : !this.sharedVersion && this.generation === readAt.generation;
    if (!unchanged) return;
    this.store(server, siteKey(site), { ...entry, link: null, shared: readAt.stamp?.shared ?? '' });
  }

  invalidate(server: string): void {
    this.generation++;
    this.versions.set(server, this.version(server) + 1);
    const keys = this.keysByServer.get(server);
    if (!keys) return;
    for (const key of keys) {
      this.bytes -= sizeOf(this.entries.get(key));
      this.entries.delete(key);
    }
    this.keysByServer.delete(server);
  }

  clear(): void {
    this.entries.clear();
    this.keysByServer.clear();
    this.serverOfSite.clear();
    this.bytes = 0;
  }

  private store(server: string, key: string, entry: Entry): void {
    this.bytes -= sizeOf(this.entries.get(key));
    if (this.bytes + sizeOf(entry) > this.maxBytes || this.entries.size >= 20_000) this.clear();
    this.entries.set(key, entry);
    this.bytes += sizeOf(entry);
    const keys = this.keysByServer.get(server) ?? new Set<string>();
    this.keysByServer.set(server, keys);
    keys.add(key);
  }
}

/** The body is kept encoded (UTF-8): an answer sends these bytes as they are, with no encoding per request. */
type Entry = { team: string; body: Buffer; link: string | null; shared: string };

/** Site uuids and server uuids are both uuids: the prefix keeps a site apart from a server's lists. */
function siteKey(site: string): string {
  return `site:${site}`;
}

function sizeOf(entry: Entry | undefined): number {
  return entry ? entry.body.length + 2 * (entry.team.length + entry.shared.length) + 64 : 0;
}
