import type { Kysely } from 'kysely';

/**
 * Outgoing webhooks (use-cases/outgoing-webhooks, jobs/webhook-dispatcher.ts): a team's endpoints,
 * each with its place in the change log (events, migration 013) and the retry state of the event it
 * is on, and the log of every delivery attempt.
 *
 * - `cursor_xid`/`cursor_seq`/`cursor_floor`: the endpoint has dealt with every event up to there
 *   (storage/event-reader.ts EventCursor); a new endpoint starts at the team's last event.
 * - `attempts`/`next_attempt_at`: tries of the current event so far and when the next is due.
 * - `lease_token`/`lease_until`: the worker process delivering for the endpoint now; another one
 *   skips it until the lease ends, so no event is delivered twice at once.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('outgoing_webhooks')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('team_uuid', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('secret_enc', 'text', (c) => c.notNull())
    .addColumn('cursor_xid', 'bigint', (c) => c.notNull().defaultTo(-1))
    .addColumn('cursor_seq', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('cursor_floor', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text')
    .addColumn('lease_token', 'text')
    .addColumn('lease_until', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('outgoing_webhooks_team').on('outgoing_webhooks').columns(['team_uuid', 'created_at']).execute();
  await db.schema
    .createTable('outgoing_webhook_deliveries')
    .addColumn('uuid', 'text', (c) => c.primaryKey())
    .addColumn('webhook_uuid', 'text', (c) => c.notNull())
    .addColumn('event_seq', 'bigint', (c) => c.notNull())
    .addColumn('event_type', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .addColumn('delivered_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('outgoing_webhook_deliveries_by_webhook')
    .on('outgoing_webhook_deliveries')
    .columns(['webhook_uuid', 'created_at'])
    .execute();
}
