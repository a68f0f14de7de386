import { StepError } from '../commands.js';

/**
 * PostgreSQL quoting for SQL that travels on psql's stdin (never in argv). Identifiers are
 * validated and double-quoted (so case and `$` survive); strings are standard-conforming literals
 * (only `'` is special), which POSTGRES_SESSION_PREAMBLE pins for the session.
 */
const DATABASE_NAME = /^[A-Za-z0-9_$]{1,63}$/;
const ROLE_NAME = /^(?!pg_)[A-Za-z0-9_]{1,63}$/i;

/**
 * Pins standard_conforming_strings (so a backslash is an ordinary character) and keeps statements
 * that carry a password out of the server log, whatever log_statement says. Needs a superuser,
 * which psql run as `postgres` is.
 */
export const POSTGRES_SESSION_PREAMBLE =
  "SET standard_conforming_strings = on;\nSET log_statement = 'none';\nSET log_min_error_statement = 'panic';\n";

export function postgresDatabaseName(name: string): string {
  if (!DATABASE_NAME.test(name))
    throw new StepError(`database name ${JSON.stringify(name)} must be 1-63 letters, digits, _ or $`);
  return name;
}

export function postgresRoleName(name: string): string {
  if (!ROLE_NAME.test(name)) {
    throw new StepError(`database user ${JSON.stringify(name)} must be 1-63 letters, digits or _ and not start with pg_`);
  }
  return name;
}

function quoteIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

export function postgresDatabaseIdentifier(name: string): string {
  return quoteIdentifier(postgresDatabaseName(name));
}

export function postgresRoleIdentifier(name: string): string {
  return quoteIdentifier(postgresRoleName(name));
}

/** A string literal holding exactly value. NUL cannot be stored in PostgreSQL text and is refused. */
export function postgresString(value: string): string {
  if (value.includes('\0')) throw new StepError('a PostgreSQL string cannot contain NUL');
  return `'${value.replace(/'/g, "''")}'`;
}
