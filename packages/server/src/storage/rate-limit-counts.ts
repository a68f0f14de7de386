import { type Kysely, sql } from 'kysely';
import type { Database } from './schema.js';

/** What one process counted for a rate-limit key in a minute since it last shared. */
export interface CountToShare {
  key: string;
  /** Whole minutes since the epoch. */
  minute: number;
  /** Requests not yet shared; 0 for a key whose total is only asked for. */
  added: number;
}

/**
 * Adds each key's new requests to its shared count and answers the totals, of those keys and of the
 * ones only asked about, in one statement (PostgreSQL only: several API processes share the table;
 * migration 019). Rows are taken in key order, so two processes sharing overlapping keys at once
 * wait for each other rather than deadlock.
 */
export async function shareRateLimitCounts(
  db: Kysely<Database>,
  counts: readonly CountToShare[],
): Promise<{ key: string; minute: number; count: number }[]> {
  if (counts.length === 0) return [];
  const { rows } = await sql<{ key: string; minute: number; count: number }>`
    WITH incoming AS (
      SELECT * FROM unnest(${counts.map((c) => c.key)}::text[], ${counts.map((c) => c.minute)}::int[], ${counts.map((c) => c.added)}::int[])
        AS t(key, minute, added)
    ), added AS (
      INSERT INTO rate_limit_counts (key, minute, count)
      SELECT key, minute, added FROM incoming WHERE added > 0 ORDER BY key, minute
      ON CONFLICT (key, minute) DO UPDATE SET count = rate_limit_counts.count + excluded.count
      RETURNING key, minute, count
    )
    SELECT key, minute, count FROM added
    UNION ALL
    SELECT c.key, c.minute, c.count FROM rate_limit_counts c
      JOIN incoming i ON i.key = c.key AND i.minute = c.minute AND i.added = 0`.execute(db);
  return rows.map((row) => ({ key: row.key, minute: Number(row.minute), count: Number(row.count) }));
}

/** Removes the counts of minutes before `minute`: nothing reads them once their minute is over. */
export async function pruneRateLimitCounts(db: Kysely<Database>, minute: number): Promise<void> {
  await db.deleteFrom('rate_limit_counts').where('minute', '<', minute).execute();
}
