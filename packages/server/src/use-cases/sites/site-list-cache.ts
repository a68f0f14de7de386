/**
 * Serialised site lists per server, so the hottest read skips the database and JSON work (NOTES:
 * cached bytes reach ~1x raw node:http; querying 20 rows per request reached 0.15x). Every write
 * this process makes that changes a server's sites — create, delete, each status change of a job —
 * calls `invalidate(server)`.
 *
 * Several processes on one PostgreSQL: the writes of the others are seen through the shared
 * version, a counter per server that the database bumps in the writing transaction itself
 * (migration 010's triggers). Each read takes a stamp (this process's version, then the shared
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

export class SiteListCache {
  private readonly entries = new Map<string, { team: string; body: string; link: string | null; shared: string }>();
  private readonly keysByServer = new Map<string, Set<string>>();
  /** Bumped by every invalidation: a list read before a change must not be stored after it. */
  private readonly versions = new Map<string, number>();

  constructor(
    readonly enabled: boolean,
    private readonly sharedVersion: SharedListVersion = null,
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
  ): { body: string; link: string | null } | undefined {
    if (!this.enabled) return undefined;
    const hit = this.entries.get(`${server}?${query}`);
    return hit && hit.shared === stamp.shared && teams.includes(hit.team) ? hit : undefined;
  }

  version(server: string): number {
    return this.versions.get(server) ?? 0;
  }

  set(server: string, query: string, entry: { team: string; body: string; link: string | null }, stamp: SiteListStamp): void {
    if (!this.enabled || this.version(server) !== stamp.local) return;
    if (this.entries.size > 50_000) this.clear();
    const key = `${server}?${query}`;
    this.entries.set(key, { ...entry, shared: stamp.shared });
    const keys = this.keysByServer.get(server) ?? new Set<string>();
    this.keysByServer.set(server, keys);
    keys.add(key);
  }

  invalidate(server: string): void {
    this.versions.set(server, this.version(server) + 1);
    const keys = this.keysByServer.get(server);
    if (!keys) return;
    for (const key of keys) this.entries.delete(key);
    this.keysByServer.delete(server);
  }

  clear(): void {
    this.entries.clear();
    this.keysByServer.clear();
  }
}
