import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect, sql } from 'kysely';
import { MIGRATION_TABLE, migrations, newerMigrations } from './migrations/index.js';
import { loadPg } from './pg-driver.js';
import type { Database } from './schema.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import { withStatementCache } from './sqlite-statement-cache.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Storage {
  db: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

/** SQLite file (default) or PostgreSQL when a URL is given; migrations run before use. */
export async function openStorage(options: { databaseUrl?: string | null; sqliteFile: string }): Promise<Storage> {
  const storage = options.databaseUrl ? await openPostgres(options.databaseUrl) : openSqlite(options.sqliteFile);
  try {
    await migrate(storage.db);
  } catch (error) {
    // The pool and SQLite's checkpoint thread would keep a failed `serve` or `restore` from exiting.
    await storage.close().catch(() => undefined);
    throw error;
  }
  return storage;
}

function openSqlite(file: string): Storage {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const sqlite = new SQLite(file);
  // WAL lets the CLI read while the service writes; busy_timeout makes a second process wait, not fail.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  // Group commit gives each unit a SAVEPOINT, and SQLite keeps the pages a unit changes in a
  // statement journal that spills to a temporary file past 64 KiB (16 pages): units past it opened,
  // wrote and unlinked a file in /var/tmp (one unit in about twenty of bench/job-cost.ts's creates and
  // jobs, under strace), which cost `npm run bench`'s creates a fifth of their rate. Kept in memory,
  // the journal is freed at RELEASE. Sorts and temporary tables go to memory too; the service's are
  // small (pages of lists, grouped counts).
  sqlite.pragma('temp_store = MEMORY');
  const db = new Kysely<Database>({ dialect: new SqliteDialect({ database: withStatementCache(sqlite) }) });
  if (file === ':memory:') return { db, dialect: 'sqlite', close: () => db.destroy() };
  // Checkpoints run in a thread of their own; the automatic one (40 MB of WAL) is only a backstop.
  sqlite.pragma('wal_autocheckpoint = 10000');
  const checkpointer = startCheckpointer(file);
  return {
    db,
    dialect: 'sqlite',
    close: async () => {
      await checkpointer.stop();
      await db.destroy();
    },
  };
}

async function openPostgres(url: string): Promise<Storage> {
  const pg = await loadPg();
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle connection the server ends (a restart, a failover, pg_terminate_backend) is emitted here;
  // unheard, it would end the process. The pool has already dropped that client, and a query that
  // was using a connection gets the error itself, so nothing is lost by not rethrowing it.
  pool.on('error', () => undefined);
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

async function migrate(db: Kysely<Database>): Promise<void> {
  const newer = await migrationsUnknownHere(db);
  if (newer.length > 0) {
    // Kysely would say "corrupted migrations": the database is fine, this version is older than it.
    throw new Error(
      `this database was upgraded by a newer Siteplane: it has ${newer.length === 1 ? 'migration' : 'migrations'} ${newer.join(', ')}, which this version does not know. ` +
        'A downgrade needs the database as it was before the upgrade: restore the backup taken then (docs/operating.md, section 4), or run the newer version.',
    );
  }
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === 'Error');
  if (error || failed) {
    throw new Error(`database migration ${failed?.migrationName ?? ''} failed: ${String(error)}`);
  }
}

/** The migrations the database records that this version has not got: none on a new database (no table yet). */
async function migrationsUnknownHere(db: Kysely<Database>): Promise<string[]> {
  const recorded = await sql<{ name: string }>`SELECT name FROM ${sql.table(MIGRATION_TABLE)}`.execute(db).then(
    (result) => result.rows.map((row) => row.name),
    // No table yet; any other failure is the migrator's to report, just below.
    () => [],
  );
  return newerMigrations(recorded);
}
