import { type Kysely, sql } from 'kysely';

/** Forward-only; both dialects run the same statements (ARCHITECTURE §4). */
export async function up(db: Kysely<unknown>): Promise<void> {
  const text = 'text' as const;
  await db.schema
    .createTable('accounts')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('name', text, (c) => c.notNull().unique())
    .addColumn('created_at', text, (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('teams')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('account_uuid', text, (c) => c.notNull().references('accounts.uuid'))
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addUniqueConstraint('teams_account_name', ['account_uuid', 'name'])
    .execute();
  await db.schema
    .createTable('tokens')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('account_uuid', text, (c) => c.notNull().references('accounts.uuid'))
    .addColumn('team_uuid', text, (c) => c.references('teams.uuid'))
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('scope', text, (c) => c.notNull())
    .addColumn('hash', text, (c) => c.notNull().unique())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('revoked_at', text)
    .execute();
  await db.schema
    .createTable('servers')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('team_uuid', text, (c) => c.notNull().references('teams.uuid'))
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('ip', text, (c) => c.notNull())
    .addColumn('connection', text, (c) => c.notNull())
    .addColumn('ssh_port', 'integer', (c) => c.notNull())
    .addColumn('ssh_user', text, (c) => c.notNull())
    .addColumn('public_key', text)
    .addColumn('private_key_enc', text)
    .addColumn('host_key_sha256', text)
    .addColumn('facts', text, (c) => c.notNull())
    .addColumn('facts_source', text, (c) => c.notNull())
    .addColumn('facts_at', text)
    .addColumn('status', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .addColumn('deleted_at', text)
    .execute();
  await db.schema.createIndex('servers_team').on('servers').columns(['team_uuid', 'created_at', 'uuid']).execute();
  await db.schema
    .createTable('server_users')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('server_uuid', text, (c) => c.notNull().references('servers.uuid'))
    .addColumn('username', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addUniqueConstraint('server_users_name', ['server_uuid', 'username'])
    .execute();
  for (const table of ['dns_profiles', 'vc_profiles'] as const) {
    let t = db.schema
      .createTable(table)
      .addColumn('uuid', text, (c) => c.primaryKey())
      .addColumn('team_uuid', text, (c) => c.notNull().references('teams.uuid'))
      .addColumn('provider', text, (c) => c.notNull())
      .addColumn('name', text, (c) => c.notNull())
      .addColumn('created_at', text, (c) => c.notNull());
    t =
      table === 'dns_profiles'
        ? t.addColumn('credentials_enc', text, (c) => c.notNull()).addColumn('verified_at', text)
        : t
            .addColumn('base_url', text)
            .addColumn('token_enc', text)
            .addColumn('repositories_enc', text)
            .addColumn('account_login', text);
    await t.execute();
    await db.schema.createIndex(`${table}_team`).on(table).columns(['team_uuid', 'created_at', 'uuid']).execute();
  }
  await db.schema
    .createTable('sites')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('team_uuid', text, (c) => c.notNull().references('teams.uuid'))
    .addColumn('server_uuid', text, (c) => c.notNull().references('servers.uuid'))
    .addColumn('server_user_uuid', text, (c) => c.notNull().references('server_users.uuid'))
    .addColumn('type', text, (c) => c.notNull())
    .addColumn('domain', text, (c) => c.notNull())
    .addColumn('free_domain', 'integer', (c) => c.notNull())
    .addColumn('free_domain_base', text)
    .addColumn('status', text, (c) => c.notNull())
    .addColumn('ssl', text, (c) => c.notNull())
    .addColumn('supports_livewire', 'integer', (c) => c.notNull())
    .addColumn('options', text, (c) => c.notNull())
    .addColumn('runtime', text, (c) => c.notNull())
    .addColumn('secrets_enc', text)
    .addColumn('db_engine', text)
    .addColumn('db_name', text)
    .addColumn('db_user', text)
    .addColumn('db_create', 'integer', (c) => c.notNull())
    .addColumn('db_install_engine', 'integer', (c) => c.notNull())
    .addColumn('db_sha2', 'integer', (c) => c.notNull())
    .addColumn('port', 'integer')
    .addColumn('singleton_type', text)
    .addColumn('failure', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('updated_at', text, (c) => c.notNull())
    .addColumn('deleted_at', text)
    .execute();
  await db.schema.createIndex('sites_server_list').on('sites').columns(['server_uuid', 'created_at', 'uuid']).execute();
  // The limits of spec §8 held by the database, so two concurrent requests cannot both win.
  await sql`CREATE UNIQUE INDEX sites_domain_live ON sites (server_uuid, domain) WHERE deleted_at IS NULL`.execute(db);
  await sql`CREATE UNIQUE INDEX sites_singleton_live ON sites (server_uuid, singleton_type) WHERE deleted_at IS NULL AND singleton_type IS NOT NULL`.execute(
    db,
  );
  await sql`CREATE UNIQUE INDEX sites_port_live ON sites (server_uuid, port) WHERE deleted_at IS NULL AND port IS NOT NULL`.execute(
    db,
  );
  for (const table of ['server_databases', 'server_database_users'] as const) {
    await db.schema
      .createTable(table)
      .addColumn('server_uuid', text, (c) => c.notNull().references('servers.uuid'))
      .addColumn('name_key', text, (c) => c.notNull())
      .addColumn('name', text, (c) => c.notNull())
      .addColumn('engine', text, (c) => c.notNull())
      .addColumn('site_uuid', text)
      .addColumn('created_at', text, (c) => c.notNull())
      .addPrimaryKeyConstraint(`${table}_pk`, ['server_uuid', 'name_key'])
      .execute();
  }
  await db.schema
    .createTable('site_resources')
    .addColumn('site_uuid', text, (c) => c.notNull().references('sites.uuid'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('kind', text, (c) => c.notNull())
    .addColumn('ref', text, (c) => c.notNull())
    .addColumn('details', text, (c) => c.notNull())
    .addColumn('created_at', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('site_resources_pk', ['site_uuid', 'kind', 'ref'])
    .execute();
  await db.schema
    .createTable('operations')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('site_uuid', text, (c) => c.notNull().references('sites.uuid'))
    .addColumn('team_uuid', text, (c) => c.notNull())
    .addColumn('kind', text, (c) => c.notNull())
    .addColumn('status', text, (c) => c.notNull())
    .addColumn('params', text, (c) => c.notNull())
    .addColumn('error', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addColumn('started_at', text)
    .addColumn('finished_at', text)
    .execute();
  await db.schema.createIndex('operations_site').on('operations').columns(['site_uuid', 'created_at']).execute();
  await db.schema
    .createTable('operation_steps')
    .addColumn('operation_uuid', text, (c) => c.notNull().references('operations.uuid'))
    .addColumn('idx', 'integer', (c) => c.notNull())
    .addColumn('name', text, (c) => c.notNull())
    .addColumn('status', text, (c) => c.notNull())
    .addColumn('exit_code', 'integer')
    .addColumn('started_at', text, (c) => c.notNull())
    .addColumn('finished_at', text)
    .addPrimaryKeyConstraint('operation_steps_pk', ['operation_uuid', 'idx'])
    .execute();
  await db.schema
    .createTable('operation_logs')
    .addColumn('operation_uuid', text, (c) => c.notNull().references('operations.uuid'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('at', text, (c) => c.notNull())
    .addColumn('line', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('operation_logs_pk', ['operation_uuid', 'seq'])
    .execute();
  await db.schema
    .createTable('jobs')
    .addColumn('uuid', text, (c) => c.primaryKey())
    .addColumn('operation_uuid', text, (c) => c.notNull().references('operations.uuid'))
    .addColumn('site_uuid', text, (c) => c.notNull())
    .addColumn('kind', text, (c) => c.notNull())
    .addColumn('status', text, (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('run_at', text, (c) => c.notNull())
    .addColumn('lease_until', text)
    .addColumn('locked_by', text)
    .addColumn('last_error', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_claim').on('jobs').columns(['status', 'run_at']).execute();
  await db.schema.createIndex('jobs_site').on('jobs').columns(['site_uuid', 'status', 'created_at']).execute();
  await db.schema
    .createTable('idempotency_keys')
    .addColumn('account_uuid', text, (c) => c.notNull())
    .addColumn('key', text, (c) => c.notNull())
    .addColumn('method', text, (c) => c.notNull())
    .addColumn('path', text, (c) => c.notNull())
    .addColumn('body_hash', text, (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response', text)
    .addColumn('headers', text)
    .addColumn('created_at', text, (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['account_uuid', 'key'])
    .execute();
}
