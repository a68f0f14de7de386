import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * The rate limits' counts shared by several API processes on one PostgreSQL (http/rate-limit.ts,
 * storage/rate-limit-counts.ts): one row per key (`token:<uuid>`, `address:<ip>`) and minute, each
 * process adding what it counted about once a second. UNLOGGED on PostgreSQL: the counts of the
 * current minute are all they are for, so a crash that loses them loses nothing worth a WAL write
 * each second. SQLite has one process, which counts alone: there the table stays empty.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const table = db.schema.createTable('rate_limit_counts');
  await (db.getExecutor().adapter instanceof PostgresAdapter ? table.modifyFront(sql`unlogged`) : table)
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('minute', 'integer', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('rate_limit_counts_pkey', ['key', 'minute'])
    .execute();
}
