import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { openStorage } from '../../src/storage/database.js';
import { migrations } from '../../src/storage/migrations/index.js';
import { TEST_DB } from '../support/test-service.js';

const PG_ADMIN = process.env.SITEPLANE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * Several processes starting together on an empty PostgreSQL database each run the migrations at
 * start. Kysely's migrator takes a session advisory lock (pg_advisory_lock) around the run and
 * tolerates a migration table another process created meanwhile, so one runs them and the others
 * find them done. Six storages with pools of their own (as six processes have) open at once here;
 * test/cluster does it with real `siteplane serve` processes.
 */
describe.skipIf(TEST_DB !== 'postgres')('migrations when several processes start together (PostgreSQL)', () => {
  it('six at once on an empty database: all open, every migration recorded once, its objects made once', async () => {
    const dbName = `sp_migrate_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_ADMIN });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    const databaseUrl = PG_ADMIN.replace(/\/[^/]*$/, `/${dbName}`);
    const opened = await Promise.allSettled(
      Array.from({ length: 6 }, () => openStorage({ databaseUrl, sqliteFile: ':memory:' })),
    );
    try {
      expect(opened.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason))).toEqual([]);
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      const names = await db.query<{ name: string }>('SELECT name FROM kysely_migration ORDER BY name');
      const triggers = await db.query(`SELECT tgname FROM pg_trigger WHERE tgname LIKE '%_site_list_changed'`);
      await db.end();
      expect(names.rows.map((r) => r.name)).toEqual(Object.keys(migrations).sort());
      expect(triggers.rows).toHaveLength(3);
    } finally {
      for (const o of opened) if (o.status === 'fulfilled') await o.value.close();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin.end();
    }
  });
});
