import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { MYSQL_SESSION_PREAMBLE, mysqlString } from '../../src/provisioning/steps/database/mysql-sql-quote.js';
import { POSTGRES_SESSION_PREAMBLE, postgresString } from '../../src/provisioning/steps/database/postgresql-sql-quote.js';
import { HOSTILE_VALUES } from './support/hostile.js';

/**
 * The same quoting against the real clients and servers, when this machine has them (the
 * project's machines run MariaDB and PostgreSQL on 127.0.0.1): each hostile value goes on stdin,
 * comes back from SELECT byte for byte, and nothing else runs. Hex output keeps the comparison
 * exact for line breaks and tabs.
 */
function run(command: string, args: string[], stdin: string) {
  return spawnSync(command, args, { input: stdin, encoding: 'utf8', timeout: 20_000 });
}

const mysqlArgs = ['-h', '127.0.0.1', '-u', 'root', '--batch', '--skip-column-names', '--default-character-set=utf8mb4'];
const psqlArgs = ['-h', '127.0.0.1', '-U', 'postgres', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', 'postgres'];
const hasMysql = run('mysql', mysqlArgs, 'SELECT 1;').stdout?.trim() === '1';
const hasPostgres = run('psql', psqlArgs, 'SELECT 1;').stdout?.trim() === '1';
const hex = (value: string) => Buffer.from(value, 'utf8').toString('hex').toUpperCase();

describe.skipIf(!hasMysql)('MySQL/MariaDB quoting against a real server', () => {
  it('returns every hostile value unchanged', () => {
    const sql = HOSTILE_VALUES.map((value) => `SELECT HEX(${mysqlString(value)});\n`).join('');
    const result = run('mysql', mysqlArgs, MYSQL_SESSION_PREAMBLE.replace('SET SESSION sql_log_off = 1;\n', '') + sql);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim().split('\n')).toEqual(HOSTILE_VALUES.map(hex));
  });
});

describe.skipIf(!hasPostgres)('PostgreSQL quoting against a real server', () => {
  it('returns every hostile value unchanged', () => {
    const sql = HOSTILE_VALUES.map(
      (value) => `SELECT upper(encode(convert_to(${postgresString(value)}, 'UTF8'), 'hex'));\n`,
    ).join('');
    const result = run('psql', psqlArgs, POSTGRES_SESSION_PREAMBLE.replace(/SET log_.*\n/g, '') + sql);
    expect(result.stderr).toBe('');
    expect(result.stdout.trim().split('\n')).toEqual(HOSTILE_VALUES.map(hex));
  });
});
