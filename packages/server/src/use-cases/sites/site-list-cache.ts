/**
 * Serialised site lists per server, so the hottest read skips the database and JSON work (NOTES:
 * cached bytes reach ~1x raw node:http; querying 20 rows per request reached 0.15x). Every write
 * that changes a server's sites — create, delete, each status change of a job — calls
 * `invalidate(server)`. Only for a single process (SQLite): with several API processes on one
 * PostgreSQL, no process would see the others' writes, so the cache is off there.
 */
export class SiteListCache {
  private readonly entries = new Map<string, { team: string; body: string; link: string | null }>();
  private readonly keysByServer = new Map<string, Set<string>>();
  /** Bumped by every invalidation: a list read before a change must not be stored after it. */
  private readonly versions = new Map<string, number>();

  constructor(readonly enabled: boolean) {}

  get(server: string, query: string, teams: readonly string[]): { body: string; link: string | null } | undefined {
    if (!this.enabled) return undefined;
    const hit = this.entries.get(`${server}?${query}`);
    return hit && teams.includes(hit.team) ? hit : undefined;
  }

  version(server: string): number {
    return this.versions.get(server) ?? 0;
  }

  set(server: string, query: string, entry: { team: string; body: string; link: string | null }, readAtVersion: number): void {
    if (!this.enabled || this.version(server) !== readAtVersion) return;
    if (this.entries.size > 50_000) this.clear();
    const key = `${server}?${query}`;
    this.entries.set(key, entry);
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
