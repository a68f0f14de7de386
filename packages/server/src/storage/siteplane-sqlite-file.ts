import SQLite from 'better-sqlite3';
import { MIGRATION_TABLE, newerMigrations } from './migrations/index.js';

export interface SiteplaneSqliteSummary {
  /** The latest migration applied to the file: which Siteplane schema it holds. */
  schemaVersion: string;
  /** Sites not deleted. */
  sites: number;
}

/**
 * Checks that `file` is a whole Siteplane SQLite database — SQLite's integrity_check passes and
 * Siteplane's migrations table and sites table are there — and says which schema it holds. Opens
 * the file read-write (a read-only open of a WAL file without its `-shm` fails), so pass a copy;
 * `name` is what messages call it (the user's file, not the copy's temporary name).
 */
export function describeSiteplaneSqlite(file: string, name = file): SiteplaneSqliteSummary {
  let db: SQLite.Database;
  try {
    db = new SQLite(file, { fileMustExist: true });
  } catch (error) {
    throw new Error(`${name} cannot be opened as SQLite: ${message(error)}`);
  }
  try {
    return summarise(db, name);
  } finally {
    db.close();
  }
}

function summarise(db: SQLite.Database, name: string): SiteplaneSqliteSummary {
  let problems: string[];
  try {
    problems = (db.pragma('integrity_check') as { integrity_check: string }[]).map((row) => row.integrity_check);
  } catch (error) {
    throw new Error(`${name} is not a SQLite database: ${message(error)}`);
  }
  if (problems.join() !== 'ok') throw new Error(`${name} fails SQLite's integrity check: ${problems.slice(0, 5).join('; ')}`);
  const tables = new Set(
    (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((t) => t.name),
  );
  if (!tables.has(MIGRATION_TABLE) || !tables.has('sites')) {
    throw new Error(`${name} is a SQLite database, but not Siteplane's (no ${MIGRATION_TABLE} or sites table)`);
  }
  const applied = (db.prepare(`SELECT name FROM ${MIGRATION_TABLE} ORDER BY name`).all() as { name: string }[]).map(
    (m) => m.name,
  );
  const latest = applied.at(-1);
  if (!latest) throw new Error(`${name} is a Siteplane database no migration was applied to`);
  const sites = db.prepare('SELECT count(*) AS n FROM sites WHERE deleted_at IS NULL').get() as { n: number };
  return { schemaVersion: latest, sites: sites.n };
}

/**
 * Migrations in the file this Siteplane does not know: the file was written by a newer Siteplane,
 * and migrations only go forward, so this one must not open it.
 */
export function unknownMigrations(file: string): string[] {
  const db = new SQLite(file, { fileMustExist: true });
  try {
    const applied = db.prepare(`SELECT name FROM ${MIGRATION_TABLE}`).all() as { name: string }[];
    return newerMigrations(applied.map((m) => m.name));
  } finally {
    db.close();
  }
}

/**
 * Throws when another connection has `file` open — a running `siteplane serve` keeps one open for
 * its whole life, and in WAL mode every open connection holds a shared lock on the file. Taking the
 * exclusive lock without waiting (busy_timeout 0) is the test; it is released at once. A service
 * that starts in the instant after this check is not caught: stop the service before a restore.
 */
export function assertNoOtherConnection(file: string): void {
  const db = new SQLite(file, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 0');
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.exec('COMMIT');
  } catch (error) {
    if ((error as { code?: string }).code?.startsWith('SQLITE_BUSY') || (error as { code?: string }).code === 'SQLITE_LOCKED') {
      throw new Error(`${file} is in use (a running siteplane serve?): stop the service, then restore`);
    }
    throw error;
  } finally {
    // The last connection to close copies the WAL back into the file and removes it.
    db.close();
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
