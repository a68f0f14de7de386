import type { DbEngine } from '@siteplane/contract';
import type { ProvisionedSite, StepContext } from '../../step.js';
import { StepError } from '../commands.js';
import { claim } from '../ledger.js';
import { mysqlScript } from './mysql-client.js';
import {
  mysqlAccount,
  mysqlDatabaseName,
  mysqlGrantDatabase,
  mysqlIdentifier,
  mysqlString,
  mysqlUserName,
} from './mysql-sql-quote.js';

type DatabasePlan = NonNullable<ProvisionedSite['database']>;

/**
 * Accounts for local connections: `localhost` is the socket, `127.0.0.1` TCP when the server skips
 * name resolution (Laravel's default DB_HOST is 127.0.0.1).
 */
export const MYSQL_HOSTS = ['localhost', '127.0.0.1'] as const;

/**
 * Database (utf8mb4) and user with rights on that database only. phpMyAdmin's user (no database) is
 * its control user and gets no rights at all: people log in to phpMyAdmin with their own accounts,
 * and the control user's password sits in a PHP file the site's code can read, so any right it
 * held would belong to every PHP site of that system user. phpMyAdmin's configuration storage is
 * not set up, so it needs none. Server-wide rights an earlier version granted are taken back.
 */
export async function ensureMysqlDatabaseAndUser(ctx: StepContext, plan: DatabasePlan): Promise<void> {
  const user = mysqlUserName(plan.user);
  const database = plan.createDatabase ? mysqlDatabaseName(requiredName(plan)) : null;
  const state = await mysqlState(ctx, user, database);
  const details = { engine: plan.engine, family: 'mysql' };

  if (database) {
    const status = await claim(ctx, { kind: 'database', ref: database, details }, state.database, 'MySQL database');
    if (status === 'new') {
      await mysqlScript(
        ctx,
        `CREATE DATABASE IF NOT EXISTS ${mysqlIdentifier(database)} CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci;\n`,
        `create database ${database}`,
      );
      ctx.log(`created MySQL database ${database}`);
    } else ctx.log(`MySQL database ${database} exists`);
  }

  const scope = database ? 'database' : 'none';
  await claim(
    ctx,
    { kind: 'database_user', ref: user, details: { ...details, hosts: [...MYSQL_HOSTS], scope } },
    state.userHosts.size > 0,
    'MySQL user',
  );
  const sql: string[] = [];
  for (const host of MYSQL_HOSTS) {
    if (!state.userHosts.has(host)) sql.push(createUser(plan, user, host));
  }
  for (const host of MYSQL_HOSTS) {
    if (database && !state.grantedHosts.has(host))
      sql.push(`GRANT ALL PRIVILEGES ON ${mysqlGrantDatabase(database)}.* TO ${mysqlAccount(user, host)};\n`);
    // Only this site's own user gets here (claim refuses anyone else's).
    if (!database && state.grantedHosts.has(host))
      sql.push(`REVOKE ALL PRIVILEGES, GRANT OPTION FROM ${mysqlAccount(user, host)};\n`);
  }
  if (sql.length === 0) {
    ctx.log(`MySQL user ${user} exists with ${database ? 'its grants' : 'no rights'}`);
    return;
  }
  await mysqlScript(ctx, sql.join(''), `create database user ${user}`);
  ctx.log(
    database
      ? `created MySQL user ${user} with rights on ${database}`
      : `MySQL user ${user} is in place with no rights (phpMyAdmin's control user; people log in with their own accounts)`,
  );
}

function requiredName(plan: DatabasePlan): string {
  if (!plan.name) throw new StepError('the site has no database name; it is generated when the site is created');
  return plan.name;
}

function createUser(plan: DatabasePlan, user: string, host: string): string {
  if (plan.password === '') throw new StepError(`database user ${user} has no password`);
  const password = mysqlString(plan.password);
  const account = mysqlAccount(user, host);
  // MariaDB has no caching_sha2_password; its default (mysql_native_password) is used there.
  if (isMariadb(plan.engine)) return `CREATE USER IF NOT EXISTS ${account} IDENTIFIED BY ${password};\n`;
  const plugin = plan.useCachingSha2Password ? 'caching_sha2_password' : 'mysql_native_password';
  return `CREATE USER IF NOT EXISTS ${account} IDENTIFIED WITH ${plugin} BY ${password};\n`;
}

function isMariadb(engine: DbEngine): boolean {
  return engine.startsWith('mariadb');
}

interface MysqlState {
  database: boolean;
  userHosts: Set<string>;
  grantedHosts: Set<string>;
}

/**
 * One round trip: does the database exist, for which hosts does the user exist and hold its grant
 * on it (without a database: any server-wide right; USAGE is none, only the right to connect).
 */
async function mysqlState(ctx: StepContext, user: string, database: string | null): Promise<MysqlState> {
  // information_schema spells a grantee 'user'@'host', quotes included (user is validated: no quotes inside).
  const grantees = MYSQL_HOSTS.map((host) => mysqlString(`'${user}'@'${host}'`)).join(', ');
  const sql = [
    database
      ? `SELECT 'database', SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ${mysqlString(database)};`
      : '',
    `SELECT 'user', Host FROM mysql.user WHERE User = ${mysqlString(user)};`,
    database
      ? `SELECT 'grant', GRANTEE FROM information_schema.SCHEMA_PRIVILEGES WHERE TABLE_SCHEMA = ${mysqlString(grantPattern(database))} AND PRIVILEGE_TYPE = 'SELECT' AND GRANTEE IN (${grantees});`
      : `SELECT 'grant', GRANTEE FROM information_schema.USER_PRIVILEGES WHERE PRIVILEGE_TYPE <> 'USAGE' AND GRANTEE IN (${grantees});`,
  ]
    .filter(Boolean)
    .join('\n');
  const rows = await mysqlScript(ctx, `${sql}\n`, 'read database state');
  const state: MysqlState = { database: false, userHosts: new Set(), grantedHosts: new Set() };
  for (const [tag, value = ''] of rows) {
    if (tag === 'database') state.database = true;
    if (tag === 'user') state.userHosts.add(value);
    if (tag === 'grant') {
      const host = /@'(.*)'$/.exec(value)?.[1];
      if (host) state.grantedHosts.add(host);
    }
  }
  return state;
}

/** How the grant's database pattern is stored: `_` and `%` escaped with a backslash. */
function grantPattern(database: string): string {
  return database.replace(/([_%])/g, '\\$1');
}
