import type { Command } from 'commander';

/** Where the PostgreSQL procedure is written down; `backup` and `restore` cover the SQLite store. */
const POSTGRES_REFUSAL =
  'DATABASE_URL is set: Siteplane keeps its data in PostgreSQL, which `siteplane backup`/`restore` do not copy. ' +
  'Use PostgreSQL\'s own tools, as the README\'s "Backups" section shows: ' +
  '`pg_dump -Fc -f siteplane.dump "$DATABASE_URL"` and `pg_restore --clean --if-exists --no-owner -d "$DATABASE_URL" siteplane.dump`, ' +
  "and keep SITEPLANE_SECRET_KEY (or the data directory's secret.key) with the dump.";

async function sqliteConfig(dataDir?: string) {
  const { loadConfig, sqliteFile } = await import('@siteplane/server/config');
  const config = loadConfig(dataDir ? { ...process.env, SITEPLANE_DATA_DIR: dataDir } : process.env);
  if (config.databaseUrl) throw new Error(POSTGRES_REFUSAL);
  return { config, file: sqliteFile(config) };
}

/** Where the key that opens the database's sealed secrets lives (its value is never printed). */
function keyLocation(config: { secretKey: string | null; dataDir: string }): string {
  return config.secretKey ? 'SITEPLANE_SECRET_KEY (as set in this environment)' : `${config.dataDir}/secret.key`;
}

/** `siteplane backup` and `siteplane restore`: the SQLite database, with no service stop for a backup. */
export function backupCommands(program: Command): void {
  program
    .command('backup <file>')
    .description('Copy the SQLite database to <file> while the service runs (SQLite online backup; SITEPLANE_DATA_DIR)')
    .option('--force', 'replace <file> if it exists')
    .option('--data-dir <dir>', 'the data directory to back up (default: SITEPLANE_DATA_DIR)')
    .action(async (file: string, o: { force?: boolean; dataDir?: string }) => {
      const { config, file: source } = await sqliteConfig(o.dataDir);
      const { backupSqlite } = await import('@siteplane/server/backup');
      const result = await backupSqlite({ source, destination: file, force: o.force });
      process.stdout.write(
        `Backed up ${source}\n` +
          `  to:     ${result.file}\n` +
          `  size:   ${result.bytes} bytes\n` +
          `  schema: ${result.schemaVersion}\n` +
          `  sites:  ${result.sites}\n` +
          `The secret key is NOT in this backup. Keep ${keyLocation(config)} with it (somewhere as safe): ` +
          'without that key the restored SSH keys, DNS and VC credentials and other secrets cannot be opened.\n',
      );
    });
  program
    .command('restore <file>')
    .description('Put a backup in place as the SQLite database of a data directory (stop the service first)')
    .option('--data-dir <dir>', 'the data directory to restore into (default: SITEPLANE_DATA_DIR)')
    .option('--force', 'replace the database there (kept as siteplane.db.before-restore-<time>)')
    .action(async (file: string, o: { force?: boolean; dataDir?: string }) => {
      const { config } = await sqliteConfig(o.dataDir);
      const { restoreSqlite } = await import('@siteplane/server/restore');
      const result = await restoreSqlite({ backup: file, dataDir: config.dataDir, force: o.force, secretKey: config.secretKey });
      const out = [
        `Restored ${file}`,
        `  to:     ${result.file}`,
        `  schema: ${result.backup.schemaVersion}${
          result.restored.schemaVersion === result.backup.schemaVersion ? '' : ` → ${result.restored.schemaVersion} (migrated)`
        }`,
        `  sites:  ${result.restored.sites}`,
      ];
      if (result.keptAs) out.push(`  the database that was there is kept as ${result.keptAs}`);
      process.stdout.write(`${out.join('\n')}\n`);
      const key = result.key;
      if (!key) {
        process.stdout.write(
          `No secret key here yet: put the secret.key kept with this backup at ${config.dataDir}/secret.key (mode 0600), ` +
            'or set SITEPLANE_SECRET_KEY, BEFORE starting the service — on start without one, a new key is generated and the sealed secrets cannot be opened.\n',
        );
      } else if (key.check.problem || key.check.failed.length > 0) {
        process.stderr.write(
          `WARNING: the secret key in ${key.source} does NOT open the secrets sealed in this backup ` +
            `(${key.check.problem ?? `failed: ${key.check.failed.join(', ')}`}).\n` +
            'Put back the secret.key (or SITEPLANE_SECRET_KEY) that was kept with this backup before starting the service.\n',
        );
        process.exitCode = 2;
      } else if (key.check.checked.length === 0) {
        process.stdout.write(`The backup holds no sealed secret yet; the service will use the key in ${key.source}.\n`);
      } else {
        process.stdout.write(
          `The secret key in ${key.source} opens the sealed secrets (checked ${key.check.checked.join(', ')}).\n`,
        );
      }
    });
}
