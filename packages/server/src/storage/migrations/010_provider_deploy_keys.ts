import type { Kysely } from 'kysely';

/**
 * Deploy keys registered at a hosted provider (issue 11 item 1): the provider's id of the site's
 * key and whether registering it worked (and why not), and a record of every removal attempted
 * when a source is unbound or re-bound or its site deleted (best effort: a failure is kept here
 * and logged, the user removes the key by hand).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const text = 'text' as const;
  await db.schema.alterTable('site_sources').addColumn('deploy_key_provider_id', text).execute();
  await db.schema.alterTable('site_sources').addColumn('deploy_key_status', text).execute();
  await db.schema.alterTable('site_sources').addColumn('deploy_key_reason', text).execute();
  await db.schema
    .createTable('deploy_key_removals')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('site_uuid', text, (c) => c.notNull())
    .addColumn('vc_profile_uuid', text, (c) => c.notNull())
    .addColumn('provider', text, (c) => c.notNull())
    .addColumn('repository', text, (c) => c.notNull())
    .addColumn('provider_key_id', text, (c) => c.notNull())
    .addColumn('cause', text, (c) => c.notNull())
    .addColumn('outcome', text, (c) => c.notNull())
    .addColumn('detail', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('deploy_key_removals_site')
    .on('deploy_key_removals')
    .columns(['site_uuid', 'created_at'])
    .execute();
}
