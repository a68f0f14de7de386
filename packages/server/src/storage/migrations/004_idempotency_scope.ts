import type { Kysely } from 'kysely';

/**
 * Idempotency keys are scoped to the token's reach, not its account: (account, team set, key),
 * the team set being the SHA-256 of the token's team uuids sorted and joined by commas (a hash,
 * so an account of many teams still makes a short primary key). A reservation has a lease
 * (`reserved_until`, extended while its request runs) and an owner (`reservation`), so one whose
 * process died is taken over instead of answering 409 for a day, and a late finisher cannot
 * overwrite its successor. Responses are now stored sealed.
 *
 * The old rows are dropped, not carried over: they hold responses in clear, generated database
 * passwords among them, and say nothing of the team that sent them. They lived 24 hours at most;
 * a request retried across this upgrade runs again.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const text = 'text' as const;
  await db.schema.dropTable('idempotency_keys').execute();
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_uuid', text, (c) => c.notNull())
    .addColumn('team_set', text, (c) => c.notNull())
    .addColumn('key', text, (c) => c.notNull())
    .addColumn('method', text, (c) => c.notNull())
    .addColumn('path', text, (c) => c.notNull())
    .addColumn('body_hash', text, (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response', text)
    .addColumn('headers', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('reservation', text)
    .addColumn('reserved_until', text)
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_uuid', 'team_set', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_created').on('idempotency_keys').column('created_at').execute();
}
