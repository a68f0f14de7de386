import type { Kysely } from 'kysely';

/**
 * Push webhooks registered at a provider (issue 11 item 6): the version-control profile the hook
 * was created through, so rotating the secret updates that hook and turning the webhook off (or
 * deleting the site) removes it there; and a record of every removal attempted (best effort, like
 * deploy_key_removals: a failure is kept, and the user removes the hook by hand).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const text = 'text' as const;
  // Null for hooks registered before this migration (their profile was not kept).
  await db.schema.alterTable('site_webhooks').addColumn('vc_profile_uuid', text).execute();
  await db.schema
    .createTable('webhook_removals')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('site_uuid', text, (c) => c.notNull())
    .addColumn('vc_profile_uuid', text)
    .addColumn('provider', text, (c) => c.notNull())
    .addColumn('repository', text, (c) => c.notNull())
    .addColumn('provider_hook_id', text, (c) => c.notNull())
    .addColumn('cause', text, (c) => c.notNull())
    .addColumn('outcome', text, (c) => c.notNull())
    .addColumn('detail', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_removals_site').on('webhook_removals').columns(['site_uuid', 'created_at']).execute();
}
