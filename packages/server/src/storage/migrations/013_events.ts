import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * The per-team change log (storage/event-log.ts): one row per change of a site, operation,
 * deployment or certificate, written in the transaction of the change it describes, read by
 * GET /api/v1/events and the outgoing webhooks; pruned after a retention period.
 *
 * `xid` (PostgreSQL only; 0 on SQLite) is the writing transaction's id. Sequence numbers are taken
 * when a row is inserted but become visible when its transaction commits, so on PostgreSQL a
 * reader could see seq 11 before seq 10; it reads instead in (xid, seq) order and only rows of
 * transactions older than every one still running, which no later commit can precede.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const postgres = db.getExecutor().adapter instanceof PostgresAdapter;
  await db.schema
    .createTable('events')
    .addColumn('seq', postgres ? 'bigserial' : 'integer', (c) => (postgres ? c.primaryKey() : c.primaryKey().autoIncrement()))
    .addColumn('team_uuid', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject_uuid', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('xid', 'bigint', (c) => c.notNull().defaultTo(postgres ? sql`(pg_current_xact_id()::text::bigint)` : 0))
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_team_order').on('events').columns(['team_uuid', 'xid', 'seq']).execute();
  await db.schema.createIndex('events_created').on('events').columns(['created_at']).execute();
}
