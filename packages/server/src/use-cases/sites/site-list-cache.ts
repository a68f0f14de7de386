/**
 * Serialised site reads, so the hottest reads skip the database and JSON work (NOTES: cached bytes
 * reach ~1x raw node:http; querying 20 rows per request reached 0.15x): the site lists per server
 * and each single site (GET /sites/<uuid>), both keyed under the site's server. Every write that
 * changes a server's sites — create, delete, each status change of a job — calls
 * `invalidate(server)`, which drops that server's lists and sites alike. Only for a single process
 * (SQLite): with several API processes on one PostgreSQL, no process would see the others' writes,
 * so the cache is off there.
 */
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

  /** `maxBytes` bounds the cached text (~2 bytes a character); past it everything is dropped and rebuilt. */
  constructor(
    readonly enabled: boolean,
    private readonly maxBytes = 64 * 1024 * 1024,
  ) {}

  get(server: string, query: string, teams: readonly string[]): { body: string; link: string | null } | undefined {
    if (!this.enabled) return undefined;
    const hit = this.entries.get(`${server}?${query}`);
    return hit && teams.includes(hit.team) ? hit : undefined;
  }

  version(server: string): number {
    return this.versions.get(server) ?? 0;
  }

  set(server: string, query: string, entry: Entry, readAtVersion: number): void {
    if (!this.enabled || this.version(server) !== readAtVersion) return;
    this.store(server, `${server}?${query}`, entry);
  }

  /** The site's record as JSON text, when one of the caller's teams owns it and it is cached. */
  getSite(site: string, teams: readonly string[]): string | undefined {
    if (!this.enabled) return undefined;
    const hit = this.entries.get(siteKey(site));
    return hit && teams.includes(hit.team) ? hit.body : undefined;
  }

  /** Taken before reading the site; `setSite` stores only when nothing changed since. */
  siteVersion(site: string): SiteVersion {
    const server = this.serverOfSite.get(site);
    return server ? { server, version: this.version(server) } : { server: null, version: this.generation };
  }

  setSite(site: string, server: string, entry: { team: string; body: string }, readAt: SiteVersion): void {
    if (!this.enabled) return;
    const unchanged =
      readAt.server === null ? this.generation === readAt.version : this.version(readAt.server) === readAt.version;
    if (!unchanged) return;
    if (this.serverOfSite.size >= 200_000) this.serverOfSite.clear();
    this.serverOfSite.set(site, server);
    this.store(server, siteKey(site), { ...entry, link: null });
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
    if (this.bytes + sizeOf(entry) > this.maxBytes || this.entries.size >= 100_000) this.clear();
    this.entries.set(key, entry);
    this.bytes += sizeOf(entry);
    const keys = this.keysByServer.get(server) ?? new Set<string>();
    this.keysByServer.set(server, keys);
    keys.add(key);
  }
}

type Entry = { team: string; body: string; link: string | null };
export type SiteVersion = { server: string | null; version: number };

/** Site uuids and server uuids are both uuids: the prefix keeps a site apart from a server's lists. */
function siteKey(site: string): string {
  return `site:${site}`;
}

function sizeOf(entry: Entry | undefined): number {
  return entry ? 2 * (entry.body.length + entry.team.length) + 64 : 0;
}
