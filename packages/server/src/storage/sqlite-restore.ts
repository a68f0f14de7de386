import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openStorage } from './database.js';
import { checkSealedValues, type SealedValuesCheck } from './sealed-values-check.js';
import {
  assertNoOtherConnection,
  describeSiteplaneSqlite,
  type SiteplaneSqliteSummary,
  unknownMigrations,
} from './siteplane-sqlite-file.js';

export interface RestoreResult {
  /** The database file now in place. */
  file: string;
  /** Schema and sites of the backup as it was, and after the migrations of this Siteplane ran. */
  backup: SiteplaneSqliteSummary;
  restored: SiteplaneSqliteSummary;
  /** Where the database that was there before was kept (only with force). */
  keptAs: string | null;
  /** Where the key the restored service will use comes from; null when there is none yet. */
  key: { source: 'SITEPLANE_SECRET_KEY' | string; check: SealedValuesCheck } | null;
}

/**
 * Puts a backup made by `siteplane backup` (or any whole Siteplane SQLite file) in place as the
 * data directory's database. The backup is copied and checked before anything in the data
 * directory changes; an existing database is replaced only with `force`, only when no process has
 * it open, and is kept beside it under a dated name. The migrations of this Siteplane then run, so
 * an older backup is brought up to its schema (a newer one is refused: migrations go forward only).
 */
export async function restoreSqlite(options: {
  backup: string;
  dataDir: string;
  force?: boolean;
  /** SITEPLANE_SECRET_KEY when set; else the data directory's `secret.key` is used if present. */
  secretKey?: string | null;
  now?: Date;
}): Promise<RestoreResult> {
  const backup = resolve(options.backup);
  if (!existsSync(backup)) throw new Error(`there is no file ${backup}`);
  const dataDir = resolve(options.dataDir);
  const target = join(dataDir, 'siteplane.db');
  const present = existsSync(target) || existsSync(`${target}-wal`);
  if (present && !options.force) {
    throw new Error(
      `${dataDir} already has a database (${target}): stop the service and restore with --force (the current one is kept as siteplane.db.before-restore-<time>)`,
    );
  }
  mkdirSync(dataDir, { recursive: true });
  const incoming = join(dataDir, `.siteplane.db.restoring-${process.pid}`);
  removeWithJournals(incoming);
  let keptAs: string | null = null;
  try {
    copyFileSync(backup, incoming);
    const summary = describeSiteplaneSqlite(incoming, backup);
    const newer = unknownMigrations(incoming);
    if (newer.length > 0) {
      throw new Error(`${backup} was made by a newer Siteplane (migrations ${newer.join(', ')} unknown here): upgrade first`);
    }
    if (present) {
      if (existsSync(target)) assertNoOtherConnection(target);
      const stamp = (options.now ?? new Date()).toISOString().replace(/[:.]/g, '-');
      keptAs = `${target}.before-restore-${stamp}`;
      // Its journals go with it: a WAL left beside the restored file would be read into it.
      for (const suffix of ['', '-wal', '-shm']) {
        if (existsSync(`${target}${suffix}`)) renameSync(`${target}${suffix}`, `${keptAs}${suffix}`);
      }
    }
    renameSync(incoming, target);
    const storage = await openStorage({ sqliteFile: target });
    await storage.close();
    const restored = describeSiteplaneSqlite(target);
    return { file: target, backup: summary, restored, keptAs, key: keyCheck(target, dataDir, options.secretKey ?? null) };
  } finally {
    removeWithJournals(incoming);
  }
}

function keyCheck(file: string, dataDir: string, configured: string | null): RestoreResult['key'] {
  if (configured) return { source: 'SITEPLANE_SECRET_KEY', check: checkSealedValues(file, Buffer.from(configured, 'base64')) };
  const keyFile = join(dataDir, 'secret.key');
  if (!existsSync(keyFile)) return null;
  const key = Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64');
  return { source: keyFile, check: checkSealedValues(file, key) };
}

function removeWithJournals(file: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
}
