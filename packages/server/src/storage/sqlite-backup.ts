import { chmodSync, existsSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import SQLite from 'better-sqlite3';
import { describeSiteplaneSqlite, type SiteplaneSqliteSummary } from './siteplane-sqlite-file.js';

export interface BackupResult extends SiteplaneSqliteSummary {
  file: string;
  bytes: number;
}

/** Pages per backup step: all of them, so the copy is one read transaction (see below). */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies the live SQLite database `source` to `destination` with SQLite's online backup API while
 * the service goes on writing. The copy is written under a temporary name beside the destination,
 * checked, and renamed into place, so `destination` is never a half-written file.
 *
 * Why all pages in one step: the backup API restarts whenever another connection writes between
 * two steps, and a busy service writes every few milliseconds, so a copy made in small steps might
 * never finish. One step reads everything in one read transaction — in WAL mode that blocks no
 * writer — and gives a snapshot of the moment it began: every transaction committed before it.
 */
export async function backupSqlite(options: { source: string; destination: string; force?: boolean }): Promise<BackupResult> {
  const destination = resolve(options.destination);
  if (!existsSync(options.source)) throw new Error(`there is no Siteplane database at ${options.source}`);
  if (existsSync(destination) && !options.force) {
    throw new Error(`${destination} exists: choose another name, or --force to replace it`);
  }
  if (!existsSync(dirname(destination))) throw new Error(`the directory ${dirname(destination)} does not exist`);
  const partial = join(dirname(destination), `.${basename(destination)}.partial-${process.pid}`);
  removeWithJournals(partial);
  const live = new SQLite(options.source, { fileMustExist: true });
  try {
    live.pragma('busy_timeout = 5000');
    await live.backup(partial, { progress: () => ALL_PAGES });
  } catch (error) {
    removeWithJournals(partial);
    throw error;
  } finally {
    live.close();
  }
  try {
    // The copy carries the live file's WAL mode; a backup is one self-contained file instead
    // (`serve` turns WAL on again when it opens a restored one).
    const copy = new SQLite(partial, { fileMustExist: true });
    try {
      copy.pragma('journal_mode = DELETE');
    } finally {
      copy.close();
    }
    const summary = describeSiteplaneSqlite(partial, destination);
    // Token hashes and sealed secrets: the operator's eyes only, like the database itself should be.
    chmodSync(partial, 0o600);
    renameSync(partial, destination);
    return { file: destination, bytes: statSync(destination).size, ...summary };
  } catch (error) {
    removeWithJournals(partial);
    throw error;
  }
}

function removeWithJournals(file: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
}
