import type pg from 'pg';

/**
 * node-postgres, loaded when a PostgreSQL URL is in use: a process on SQLite never holds its
 * modules (resident memory, issue 13; acme-client and the Route 53 SDK load on first use too).
 */
export async function loadPg(): Promise<typeof pg> {
  return (await import('pg')).default;
}
