import type { StepContext } from '../../step.js';
import { mustRun, run } from '../commands.js';
import { POSTGRES_SESSION_PREAMBLE } from './postgresql-sql-quote.js';

/**
 * psql as the `postgres` system user over the local socket (peer authentication: no password).
 * The script goes on stdin; -X ignores any psqlrc, ON_ERROR_STOP makes the first error fail the
 * run, -A -t give bare `a|b` rows.
 */
const PSQL = ['psql', '-X', '-q', '-A', '-t', '-v', 'ON_ERROR_STOP=1', '-d', 'postgres'];
// cwd / : postgres may not enter the connection user's working directory.
const AS_POSTGRES = { asUser: 'postgres', cwd: '/' };

export async function postgresScript(ctx: StepContext, sql: string, what: string): Promise<string[][]> {
  const result = await mustRun(ctx, PSQL, { ...AS_POSTGRES, stdin: POSTGRES_SESSION_PREAMBLE + sql }, what);
  return result.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split('|'));
}

export async function postgresResponds(ctx: StepContext): Promise<boolean> {
  const result = await run(ctx, PSQL, { ...AS_POSTGRES, stdin: 'SELECT 1;\n' });
  return result.code === 0 && result.stdout.trim() === '1';
}
