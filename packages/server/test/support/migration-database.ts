import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { migrations } from '../../src/storage/migrations/index.js';
import type { Database } from '../../src/storage/schema.js';
import { TEST_DB } from './test-service.js';

const PG_ADMIN = process.env.SITEPLANE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

export interface MigrationDatabase {
  db: Kysely<Database>;
  /** Siteplane's migrations over db, to stop at an earlier one before seeding rows as they were. */
  migrator: Migrator;
  /** Where it is, as `siteplane serve` is told: DATABASE_URL, or the data directory of its siteplane.db. */
  env: { DATABASE_URL: string } | { SITEPLANE_DATA_DIR: string };
  /** Closes db and drops it (PostgreSQL) or removes its directory (SQLite). */
  drop(): Promise<void>;
}

/** An empty database of its own on TEST_DB, for tests of a migration over rows written before it. */
export async function migrationDatabase(label: string): Promise<MigrationDatabase> {
  const dir = mkdtempSync(join(tmpdir(), `siteplane-${label}-`));
  const dbName = `sp_${label}_${randomBytes(6).toString('hex')}`;
  let db: Kysely<Database>;
  let env: MigrationDatabase['env'];
  if (TEST_DB === 'postgres') {
    await admin(`CREATE DATABASE ${dbName}`);
    env = { DATABASE_URL: PG_ADMIN.replace(/\/[^/]*$/, `/${dbName}`) };
    const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: 4 });
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  } else {
    env = { SITEPLANE_DATA_DIR: dir };
    const sqlite = new SQLite(join(dir, 'siteplane.db'));
    sqlite.pragma('foreign_keys = ON');
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  }
  return {
    db,
    migrator: new Migrator({ db, provider: { getMigrations: async () => migrations } }),
    env,
    async drop() {
      await db.destroy();
      rmSync(dir, { recursive: true, force: true });
      if (TEST_DB === 'postgres') await admin(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    },
  };
}

async function admin(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_ADMIN });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}
