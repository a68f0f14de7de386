import { describe, expect, it } from 'vitest';
import {
  mysqlAccount,
  mysqlGrantDatabase,
  mysqlIdentifier,
  mysqlString,
  mysqlUserName,
} from '../../src/provisioning/steps/database/mysql-sql-quote.js';
import {
  postgresDatabaseIdentifier,
  postgresRoleIdentifier,
  postgresString,
} from '../../src/provisioning/steps/database/postgresql-sql-quote.js';
import { HOSTILE_VALUES } from './support/hostile.js';
import { parseScript } from './support/sql-decode.js';

/** ARCHITECTURE §3: SQL goes through stdin; every value in it is quoted by the dialect's rules. */
describe('MySQL quoting', () => {
  it.each(HOSTILE_VALUES)('a string literal holds exactly %j and nothing else', (value) => {
    const [statement] = parseScript(`SELECT ${mysqlString(value)};`, 'mysql');
    expect(statement?.shape).toBe('SELECT ?');
    expect(statement?.strings).toEqual([value]);
  });

  it('escapes what mysql_real_escape_string escapes', () => {
    expect(mysqlString('a\'b\\c"d\0e\nf\rg\x1a')).toBe("'a\\'b\\\\c\\\"d\\0e\\nf\\rg\\Z'");
  });

  it('quotes valid identifiers with backticks and refuses everything else', () => {
    expect(mysqlIdentifier('shop_db$1')).toBe('`shop_db$1`');
    for (const bad of ['a`b', 'a b', 'db;', "x'", '', 'a'.repeat(65), 'ｄｂ', 'db\n']) {
      expect(() => mysqlIdentifier(bad)).toThrow(/must be 1-64 letters/);
    }
    for (const bad of ['root@%', 'u;', 'ü', 'a'.repeat(33)]) expect(() => mysqlUserName(bad)).toThrow();
  });

  it('escapes GRANT wildcards so a grant covers one database only', () => {
    expect(mysqlGrantDatabase('shop_db')).toBe('`shop\\_db`');
    expect(mysqlGrantDatabase('plain')).toBe('`plain`');
  });

  it('builds accounts only for local hosts', () => {
    expect(mysqlAccount('app', 'localhost')).toBe("'app'@'localhost'");
    expect(() => mysqlAccount('app', 'evil.example.com')).toThrow();
  });
});

describe('PostgreSQL quoting', () => {
  it.each(HOSTILE_VALUES)('a string literal holds exactly %j and nothing else', (value) => {
    const [statement] = parseScript(`SELECT ${postgresString(value)};`, 'postgresql');
    expect(statement?.shape).toBe('SELECT ?');
    expect(statement?.strings).toEqual([value]);
  });

  it('doubles single quotes and leaves backslashes alone (standard_conforming_strings)', () => {
    expect(postgresString("it's a \\ path")).toBe("'it''s a \\ path'");
    expect(() => postgresString('nul\0')).toThrow(/NUL/);
  });

  it('double-quotes identifiers, keeping case and $, and refuses anything else', () => {
    expect(postgresDatabaseIdentifier('Shop_DB$1')).toBe('"Shop_DB$1"');
    expect(postgresRoleIdentifier('app_user')).toBe('"app_user"');
    for (const bad of ['a"b', 'a b', "x'", 'db;--', '']) expect(() => postgresDatabaseIdentifier(bad)).toThrow();
    expect(() => postgresRoleIdentifier('pg_monitor')).toThrow(/pg_/);
  });
});
