import { setTimeout as sleep } from 'node:timers/promises';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../storage/schema.js';
import { type NamedLocks, ServerLocks } from './server-locks.js';

/**
 * Named locks across processes, for several worker processes on one PostgreSQL (ARCHITECTURE §1):
 * a session advisory lock per name, so apt/dpkg never runs twice on one server whichever process
 * runs its jobs. Waiters of this process queue in-process first; the waiter at the head polls
 * `pg_try_advisory_lock` and holds a pool connection only while it holds the lock (a blocking
 * `pg_advisory_lock` would hold one per waiter and could starve the pool the holder's job needs).
 * A process that dies loses its session, and with it the lock.
 */
export class PostgresServerLocks implements NamedLocks {
  private readonly local = new ServerLocks();

  constructor(
    private readonly db: Kysely<Database>,
    private readonly pollMs = 250,
  ) {}

  withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    return this.local.withLock(name, async () => {
      const key = sql`hashtextextended(${`siteplane:${name}`}, 0)`;
      for (;;) {
        const attempt = await this.db.connection().execute(async (conn) => {
          const { rows } = await sql<{ held: boolean }>`SELECT pg_try_advisory_lock(${key}) AS held`.execute(conn);
          if (!rows[0]?.held) return { held: false as const };
          try {
            return { held: true as const, value: await fn() };
          } finally {
            await sql`SELECT pg_advisory_unlock(${key})`.execute(conn);
          }
        });
        if (attempt.held) return attempt.value;
        await sleep(this.pollMs);
      }
    });
  }
}
