import type { StepContext } from '../../step.js';
import { AS_ROOT, mustRun, run } from '../commands.js';
import { MYSQL_SESSION_PREAMBLE } from './mysql-sql-quote.js';

/**
 * The mysql client as root over the local socket (Debian's root account authenticates by
 * unix_socket/auth_socket, so no password is needed or passed). The script goes on stdin; the
 * only arguments are fixed options. --batch --skip-column-names gives tab-separated rows.
 */
const MYSQL = ['mysql', '--batch', '--skip-column-names', '--default-character-set=utf8mb4'];

export async function mysqlScript(ctx: StepContext, sql: string, what: string): Promise<string[][]> {
  const result = await mustRun(ctx, MYSQL, { ...AS_ROOT, stdin: MYSQL_SESSION_PREAMBLE + sql }, what);
  return rows(result.stdout);
}

/** Whether the server answers at all (it may be installed but stopped). */
export async function mysqlResponds(ctx: StepContext): Promise<boolean> {
  const result = await run(ctx, MYSQL, { ...AS_ROOT, stdin: 'SELECT 1;\n' });
  return result.code === 0 && result.stdout.trim() === '1';
}

function rows(stdout: string): string[][] {
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('\t'));
}
