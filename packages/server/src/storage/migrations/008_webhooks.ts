import type { Kysely } from 'kysely';

/**
 * Push-to-deploy webhooks (issue 11 item 6): each site's webhook (its HMAC secret sealed by the
 * SecretBox, its trigger URL's token only as a SHA-256), the deliveries received (the last 100 per
 * site are kept), and the delivery ids seen in the last day, so a redelivery does not deploy twice.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const text = 'text' as const;
  await db.schema
    .createTable('site_webhooks')
    .addColumn('site_uuid', text, (c) => c.primaryKey().references('sites.uuid'))
    .addColumn('team_uuid', text, (c) => c.notNull())
    .addColumn('secret_enc', text, (c) => c.notNull())
    .addColumn('trigger_hash', text, (c) => c.notNull().unique())
    .addColumn('branches', text)
    .addColumn('registered', text)
    .addColumn('secret_rotated_at', text, (c) => c.notNull())
    .addColumn('trigger_rotated_at', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('site_uuid', text, (c) => c.notNull())
    .addColumn('provider', text, (c) => c.notNull())
    .addColumn('delivery_id', text)
    .addColumn('event', text)
    .addColumn('outcome', text, (c) => c.notNull())
    .addColumn('reason', text)
    .addColumn('detail', text)
    .addColumn('branch', text)
    .addColumn('commit_sha', text)
    .addColumn('deployment_uuid', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_site').on('webhook_deliveries').columns(['site_uuid', 'created_at']).execute();
  // One row per delivery claimed for a deployment; the primary key makes a concurrent redelivery lose.
  await db.schema
    .createTable('webhook_delivery_ids')
    .addColumn('site_uuid', text, (c) => c.notNull())
    .addColumn('provider', text, (c) => c.notNull())
    .addColumn('delivery_id', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_delivery_ids_pk', ['site_uuid', 'provider', 'delivery_id'])
    .execute();
  await db.schema.createIndex('webhook_delivery_ids_age').on('webhook_delivery_ids').column('created_at').execute();
}
