import { StepError } from '../commands.js';

/**
 * MySQL/MariaDB quoting for SQL that travels on the client's stdin (never in argv). Identifiers are
 * validated against the names Siteplane accepts and then backtick-quoted; strings are escaped the
 * way mysql_real_escape_string does. Backslash escapes assume sql_mode without
 * NO_BACKSLASH_ESCAPES, which MYSQL_SESSION_PREAMBLE pins for the session.
 */
const DATABASE_NAME = /^[A-Za-z0-9_$]{1,64}$/;
const USER_NAME = /^[A-Za-z0-9_]{1,32}$/;
const HOST_NAME = /^(localhost|127\.0\.0\.1|::1|%)$/;

/** First statement of every script: a known sql_mode (so the escaping below holds) and no general log. */
export const MYSQL_SESSION_PREAMBLE = "SET SESSION sql_mode = '';\nSET SESSION sql_log_off = 1;\n";

export function mysqlDatabaseName(name: string): string {
  if (!DATABASE_NAME.test(name))
    throw new StepError(`database name ${JSON.stringify(name)} must be 1-64 letters, digits, _ or $`);
  return name;
}

export function mysqlUserName(name: string): string {
  if (!USER_NAME.test(name)) throw new StepError(`database user ${JSON.stringify(name)} must be 1-32 letters, digits or _`);
  return name;
}

/** `name` as a quoted identifier (database). */
export function mysqlIdentifier(name: string): string {
  return `\`${mysqlDatabaseName(name).replace(/`/g, '``')}\``;
}

/**
 * The database as GRANT's `db`.* names it: there `_` and `%` are wildcards, so they are escaped —
 * otherwise a grant on `shop_db` would also cover `shopXdb`.
 */
export function mysqlGrantDatabase(name: string): string {
  return `\`${mysqlDatabaseName(name)
    .replace(/`/g, '``')
    .replace(/([_%])/g, '\\$1')}\``;
}

const STRING_ESCAPES: Record<string, string> = {
  '\0': '\\0',
  '\n': '\\n',
  '\r': '\\r',
  '\\': '\\\\',
  "'": "\\'",
  '"': '\\"',
  '\x1a': '\\Z',
};

/** A single-quoted string literal holding exactly value. */
export function mysqlString(value: string): string {
  return `'${value.replace(/[\0\n\r\\'"\x1a]/g, (c) => STRING_ESCAPES[c] ?? c)}'`;
}

/** 'user'@'host' */
export function mysqlAccount(user: string, host: string): string {
  if (!HOST_NAME.test(host)) throw new StepError(`database host ${JSON.stringify(host)} is not allowed`);
  return `${mysqlString(mysqlUserName(user))}@${mysqlString(host)}`;
}
