import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildService, type Service } from '../../src/app/build-service.js';
import { loadConfig } from '../../src/app/config.js';
import { fakeRecipes, seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';

/**
 * Two API processes on one PostgreSQL, each with its own site-list cache (the second is a second
 * service built on the same database, worker off, as `SITEPLANE_WORKER=off` runs it): a write
 * through one is in the other's next list, with no wait (test/cluster proves it with real processes).
 */
describe.skipIf(TEST_DB !== 'postgres')('site lists across processes (PostgreSQL)', () => {
  let one: TestService;
  let two: Service;
  let twoDir: string;
  let ids: { server: string; serverUser: string };

  beforeAll(async () => {
    one = await startTestService();
    twoDir = mkdtempSync(join(tmpdir(), 'siteplane-test-'));
    const config = loadConfig({
      SITEPLANE_DATA_DIR: twoDir,
      DATABASE_URL: one.databaseUrl ?? '',
      SITEPLANE_SECRET_KEY: randomBytes(32).toString('base64'),
      SITEPLANE_WORKER: 'off',
      LOG_LEVEL: 'silent',
      SITEPLANE_RATE_LIMIT: '0',
      SITEPLANE_RATE_LIMIT_ADDRESS: '0',
    });
    two = await buildService(config, { logger: pino({ level: 'silent' }), recipes: fakeRecipes() });
    ids = await seedServer(one);
  });
  afterAll(async () => {
    await two?.close();
    rmSync(twoDir, { recursive: true, force: true });
    await one?.stop();
  });

  const list = async (s: Service) => {
    const res = await s.app.inject({
      method: 'GET',
      url: `/api/v1/sites?server=${ids.server}`,
      headers: { authorization: `Bearer ${one.token}` },
    });
    expect(res.statusCode).toBe(200);
    return (res.json().data as { uuid: string; status: string }[]).map((site) => `${site.uuid} ${site.status}`);
  };
  const create = async (s: Service, n: number) => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${one.token}` },
      payload: { ...ids, type: 'static-html', domain: `x${n}.example.com`, ssl: false, options: {} },
    });
    expect(res.statusCode).toBe(202);
    return res.json().uuid as string;
  };

  it('a create through one process is in the other process’s next list, and each status change too', async () => {
    // Both caches hold the empty list first (read twice: the second is served from the cache).
    expect(await list(two)).toEqual([]);
    expect(await list(two)).toEqual([]);
    expect(await list(one)).toEqual([]);
    const a = await create(one, 1);
    expect((await list(two)).map((line) => line.split(' ')[0])).toEqual([a]);
    const b = await create(two, 2);
    expect((await list(one)).map((line) => line.split(' ')[0])).toEqual([a, b]);
    // The worker (in process one) installs both; process two's cached list follows each change.
    await waitForStatus(one, a, ['installed']);
    await waitForStatus(one, b, ['installed']);
    expect(await list(two)).toEqual([`${a} installed`, `${b} installed`]);
    expect(await list(two)).toEqual(await list(one));
    const deleted = await two.app.inject({
      method: 'DELETE',
      url: `/api/v1/sites/${a}`,
      headers: { authorization: `Bearer ${one.token}` },
    });
    expect(deleted.statusCode).toBe(202);
    expect((await list(one)).find((line) => line.startsWith(a))).not.toBe(`${a} installed`);
    await waitForStatus(one, a, ['gone']);
    expect(await list(two)).toEqual([`${b} installed`]);
    expect(await list(one)).toEqual([`${b} installed`]);
  });

  it('the version moves with the committed change only, and a list is read once per change', async () => {
    const version = async () =>
      String(
        (
          await sql<{ version: string }>`SELECT version FROM site_list_versions WHERE server_uuid = ${ids.server}`.execute(
            one.storage.db,
          )
        ).rows[0]?.version,
      );
    const before = await version();
    // A rolled-back change leaves the version as it was.
    await one.storage.db
      .transaction()
      .execute(async (trx) => {
        await trx.updateTable('sites').set({ updated_at: 'x' }).where('server_uuid', '=', ids.server).execute();
        throw new Error('roll back');
      })
      .catch(() => undefined);
    expect(await version()).toBe(before);
    await one.storage.db.updateTable('operations').set({ error: null }).where('team_uuid', 'is not', null).execute();
    expect(Number(await version())).toBeGreaterThan(Number(before));
  });
});
