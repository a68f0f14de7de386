import type { Kysely } from 'kysely';

/**
 * Temporary names in the operator's zone (FREE_DOMAIN_ZONE) each get their own certificate, and
 * every one of them spends the CA's budget for the zone's registered domain (Let's Encrypt: 50 new
 * certificates a week, shared by every tenant). One row per order placed for such a name, kept
 * when the site is deleted (deleting and re-creating must not give the budget back) and pruned
 * after 8 days, the longest window counted (use-cases/ssl/free-zone-issuances.ts).
 *
 * `certificates.deferred_until`: an order held back by one of those limits (or by the CA's own
 * rate limit) is not placed; the renewal scheduler queues the site's ssl operation again then.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const text = 'text' as const;
  await db.schema
    .createTable('free_domain_issuances')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('zone', text, (c) => c.notNull())
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('team_uuid', text, (c) => c.notNull())
    .addColumn('site_uuid', text, (c) => c.notNull())
    // 1: the name had a certificate already (a renewal: exempt from the weekly budgets).
    .addColumn('renewal', 'integer', (c) => c.notNull())
    // ordering (placed, outcome unknown: counted as issued) | issued | failed
    .addColumn('outcome', text, (c) => c.notNull())
    // After a failure: the CA's Retry-After as a moment, when it sent one.
    .addColumn('retry_after', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('free_domain_issuances_zone').on('free_domain_issuances').columns(['zone', 'created_at']).execute();
  await db.schema.createIndex('free_domain_issuances_name').on('free_domain_issuances').columns(['name', 'created_at']).execute();
  await db.schema.alterTable('certificates').addColumn('deferred_until', text).execute();
  await db.schema.createIndex('certificates_deferred').on('certificates').column('deferred_until').execute();
}
