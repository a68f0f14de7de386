import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage } from '../../src/storage/database.js';
import { MIGRATION_TABLE, migrations } from '../../src/storage/migrations/index.js';
import { siteplane } from '../support/cli-process.js';
import { type MigrationDatabase, migrationDatabase } from '../support/migration-database.js';
import { TEST_DB } from '../support/test-service.js';

const FROM_THE_FUTURE = '900_from_a_newer_siteplane';
const REFUSED =
  /this database was upgraded by a newer Siteplane: it has migration 900_from_a_newer_siteplane, which this version does not know\. A downgrade needs the database as it was before the upgrade: restore the backup taken then \(docs\/operating\.md, section 4\), or run the newer version/;

/**
 * A downgrade (docs/operating.md, section 4): an older Siteplane started on a database a newer one
 * migrated says so, names the migrations it does not know, changes nothing and exits, where
 * Kysely's migrator alone would call the database "corrupted".
 */
describe(`an older Siteplane on a database a newer one migrated (${TEST_DB})`, () => {
  let database: MigrationDatabase;
  const recorded = async () =>
    (await sql<{ name: string }>`SELECT name FROM ${sql.table(MIGRATION_TABLE)} ORDER BY name`.execute(database.db)).rows.map(
      (row) => row.name,
    );
  beforeAll(async () => {
    database = await migrationDatabase('newer');
    await database.migrator.migrateToLatest();
    await sql`INSERT INTO ${sql.table(MIGRATION_TABLE)} (name, timestamp) VALUES (${FROM_THE_FUTURE}, ${'2027-01-01T00:00:00.000Z'})`.execute(
      database.db,
    );
  });
  afterAll(() => database?.drop());

  it('opening its storage is refused with the migration named, and nothing recorded changes', async () => {
    const location =
      'DATABASE_URL' in database.env
        ? { databaseUrl: database.env.DATABASE_URL, sqliteFile: ':memory:' }
        : { sqliteFile: `${database.env.SITEPLANE_DATA_DIR}/siteplane.db` };
    await expect(openStorage(location)).rejects.toThrow(REFUSED);
    expect(await recorded()).toEqual([...Object.keys(migrations), FROM_THE_FUTURE].sort());
  });

  it('`siteplane serve` prints why and exits non-zero instead of listening', async () => {
    const run = await siteplane(['serve'], { HOST: '127.0.0.1', PORT: '0', ...database.env });
    expect(run.code, run.stdout + run.stderr).not.toBe(0);
    expect(run.stderr).toMatch(REFUSED);
    expect(run.stdout).not.toContain('listening');
  }, 60_000);
});
