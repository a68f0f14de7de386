import { dbEngineFamily } from '@siteplane/contract';
import type { LedgerEntry, StepContext } from '../../step.js';
import { mysqlScript } from '../database/mysql-client.js';
import { MYSQL_HOSTS } from '../database/mysql-database.js';
import { mysqlAccount, mysqlIdentifier } from '../database/mysql-sql-quote.js';
import { postgresScript } from '../database/postgresql-client.js';
import { postgresDatabaseIdentifier, postgresRoleIdentifier, postgresString } from '../database/postgresql-sql-quote.js';
import { type Removal, stringDetail } from './removal-step.js';

/**
 * Drops the site's database or database user, only when the deletion asked for it
 * (deleteDatabase); otherwise both stay on the server and in the ledger. DROP … IF EXISTS makes
 * "already gone" a success. PostgreSQL refuses to drop a database with open connections, so
 * those are ended first (the site's processes are already stopped).
 */
export function removeDatabaseEntry(deleteDatabase: boolean) {
  return async (ctx: StepContext, entry: LedgerEntry): Promise<Removal> => {
    const what = entry.kind === 'database' ? 'database' : 'database user';
    if (!deleteDatabase) {
      ctx.log(`kept ${what} ${entry.ref} (deleteDatabase was not requested)`);
      return 'kept';
    }
    if (family(entry) === 'mysql') {
      const sql =
        entry.kind === 'database'
          ? `DROP DATABASE IF EXISTS ${mysqlIdentifier(entry.ref)};\n`
          : `DROP USER IF EXISTS ${MYSQL_HOSTS.map((host) => mysqlAccount(entry.ref, host)).join(', ')};\n`;
      await mysqlScript(ctx, sql, `drop ${what} ${entry.ref}`);
    } else if (entry.kind === 'database') {
      await postgresScript(
        ctx,
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = ${postgresString(entry.ref)} AND pid <> pg_backend_pid();\n` +
          `DROP DATABASE IF EXISTS ${postgresDatabaseIdentifier(entry.ref)};\n`,
        `drop database ${entry.ref}`,
      );
    } else {
      await postgresScript(ctx, `DROP ROLE IF EXISTS ${postgresRoleIdentifier(entry.ref)};\n`, `drop role ${entry.ref}`);
    }
    ctx.log(`dropped ${what} ${entry.ref}`);
    return 'removed';
  };
}

function family(entry: LedgerEntry): 'mysql' | 'postgresql' {
  const recorded = stringDetail(entry, 'family');
  if (recorded === 'mysql' || recorded === 'postgresql') return recorded;
  const engine = stringDetail(entry, 'engine');
  const fromEngine = engine ? dbEngineFamily(engine) : null;
  if (fromEngine) return fromEngine;
  throw new Error(`ledger entry ${entry.kind} ${entry.ref} does not say which database engine holds it`);
}
