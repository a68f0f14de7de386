import { type Kysely, PostgresAdapter, sql } from 'kysely';

/**
 * Several API processes on one PostgreSQL each keep their own site-list cache
 * (use-cases/sites/site-list-cache.ts). A counter per server, bumped by the database itself in
 * every transaction that changes what a server's list shows (a site, an operation — the list
 * carries each site's latest one — or the server row), tells each process whether the list it
 * holds is still the list: it reads the counter (one primary-key lookup) before serving.
 *
 * Triggers rather than bumps in the code: every writer is covered, in the worker as well as the
 * API and in code written later, and the bump commits with the change or not at all (a process
 * killed after its commit cannot leave others serving the old list). They are deferred constraint
 * triggers, so the counter row is locked only at commit, after every other lock the transaction
 * takes: a delete that holds a site row and a job finishing on the same site cannot deadlock on it.
 *
 * SQLite has one process (its cache is invalidated in that process), so there the table stays empty.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('site_list_versions')
    .addColumn('server_uuid', 'text', (c) => c.primaryKey())
    .addColumn('version', 'bigint', (c) => c.notNull())
    .execute();
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`
    CREATE FUNCTION siteplane_bump_site_list(server text) RETURNS void LANGUAGE sql AS $$
      INSERT INTO site_list_versions (server_uuid, version) VALUES (server, 1)
      ON CONFLICT (server_uuid) DO UPDATE SET version = site_list_versions.version + 1
    $$`.execute(db);
  await sql`
    CREATE FUNCTION siteplane_site_list_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      rec record := COALESCE(NEW, OLD);
    BEGIN
      IF TG_TABLE_NAME = 'sites' THEN
        PERFORM siteplane_bump_site_list(rec.server_uuid);
        IF TG_OP = 'UPDATE' AND OLD.server_uuid IS DISTINCT FROM NEW.server_uuid THEN
          PERFORM siteplane_bump_site_list(OLD.server_uuid);
        END IF;
      ELSIF TG_TABLE_NAME = 'operations' THEN
        PERFORM siteplane_bump_site_list(s.server_uuid) FROM sites s WHERE s.uuid = rec.site_uuid;
      ELSE
        PERFORM siteplane_bump_site_list(rec.uuid);
      END IF;
      RETURN NULL;
    END
    $$`.execute(db);
  // A server's list answers 404 once the server is deleted or moved; its facts do not change it.
  const events = {
    sites: 'INSERT OR UPDATE OR DELETE',
    operations: 'INSERT OR UPDATE OR DELETE',
    servers: 'UPDATE OF deleted_at, team_uuid OR DELETE',
  };
  for (const [table, on] of Object.entries(events)) {
    await sql`
      CREATE CONSTRAINT TRIGGER ${sql.raw(`${table}_site_list_changed`)}
      AFTER ${sql.raw(on)} ON ${sql.table(table)}
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW
      EXECUTE FUNCTION siteplane_site_list_changed()`.execute(db);
  }
}
