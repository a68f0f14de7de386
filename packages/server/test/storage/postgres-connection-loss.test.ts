import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { TEST_DB } from '../support/test-service.js';

const ADMIN = process.env.SITEPLANE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * The server ends an idle pooled connection (a restart, a failover, pg_terminate_backend): the pool
 * emits the error, and unheard it ended the whole process (seen when a test dropped its database).
 * The service goes on, and its next query gets a new connection.
 */
describe.runIf(TEST_DB === 'postgres')('PostgreSQL ends an idle connection of the pool', () => {
  const name = `sp_loss_${randomBytes(5).toString('hex')}`;
  let storage: Storage;
  let admin: pg.Client;

  beforeAll(async () => {
    admin = new pg.Client({ connectionString: ADMIN });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    storage = await openStorage({ databaseUrl: ADMIN.replace(/\/[^/]*$/, `/${name}`), sqliteFile: ':memory:' });
  });

  afterAll(async () => {
    await storage?.close();
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });

  it('does not end the process, and the next query works', async () => {
    const before = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(storage.db);
    const pid = before.rows[0]!.pid;
    // The connection is idle in the pool now; the server ends it.
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    await new Promise((r) => setTimeout(r, 200));
    const after = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(storage.db);
    expect(after.rows[0]!.pid).not.toBe(pid);
  });
});
