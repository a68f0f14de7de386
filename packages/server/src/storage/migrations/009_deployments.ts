import type { Kysely } from 'kysely';

/**
 * Deployments (the user's code onto a site): the site's source, its deploy settings, its
 * environment (values sealed by the SecretBox, one row per key so a change never rewrites the
 * others), and one row per deployment or rollback beside its operation. `sites.deploy_needed`
 * says an environment change waits for the next successful deploy.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const text = 'text' as const;
  await db.schema
    .createTable('site_sources')
    .addColumn('site_uuid', text, (c) => c.primaryKey().references('sites.uuid'))
    .addColumn('vc_profile_uuid', text, (c) => c.notNull())
    .addColumn('provider', text, (c) => c.notNull())
    .addColumn('repository', text, (c) => c.notNull())
    .addColumn('branch', text, (c) => c.notNull())
    .addColumn('app_folder', text)
    // A git profile's remote may carry credentials in its URL: sealed like every other secret.
    .addColumn('clone_url_enc', text, (c) => c.notNull())
    .addColumn('auth', text, (c) => c.notNull())
    .addColumn('deploy_public_key', text)
    .addColumn('deploy_private_key_enc', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('site_deploy_settings')
    .addColumn('site_uuid', text, (c) => c.primaryKey().references('sites.uuid'))
    .addColumn('settings', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('site_environment')
    .addColumn('site_uuid', text, (c) => c.notNull().references('sites.uuid'))
    .addColumn('key', text, (c) => c.notNull())
    .addColumn('scope', text, (c) => c.notNull())
    .addColumn('value_enc', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('site_environment_pk', ['site_uuid', 'key'])
    .execute();
  await db.schema
    .createTable('deployments')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('site_uuid', text, (c) => c.notNull().references('sites.uuid'))
    .addColumn('team_uuid', text, (c) => c.notNull())
    .addColumn('operation_uuid', text, (c) => c.notNull().unique())
    .addColumn('kind', text, (c) => c.notNull())
    .addColumn('trigger', text, (c) => c.notNull())
    .addColumn('branch', text)
    .addColumn('requested_commit', text)
    .addColumn('commit_sha', text)
    .addColumn('commit_message', text)
    .addColumn('commit_author', text)
    .addColumn('release', text, (c) => c.notNull())
    .addColumn('from_release', text)
    .addColumn('environment_hash', text)
    .addColumn('ran_migrations', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rollback_info', text)
    .addColumn('release_bad', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('superseded_by', text)
    .addColumn('cancel_requested_at', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('deployments_site').on('deployments').columns(['site_uuid', 'created_at', 'uuid']).execute();
  await db.schema
    .alterTable('sites')
    .addColumn('deploy_needed', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
}
