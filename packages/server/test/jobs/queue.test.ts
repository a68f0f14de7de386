import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '../../src/jobs/queue.js';
import { enqueueOperation } from '../../src/use-cases/operations/enqueue-operation.js';
import { seedServer, startTestService, TEST_DB, type TestService } from '../support/test-service.js';

describe(`durable job queue on ${TEST_DB} (ARCHITECTURE §1 jobs/)`, () => {
  let s: TestService;
  let queue: JobQueue;
  let siteA: string;
  let siteB: string;
  beforeAll(async () => {
    // No in-process worker: the test claims by hand.
    s = await startTestService({ env: { SITEPLANE_WORKER: 'off' } });
    queue = new JobQueue(s.storage.db, s.storage.dialect);
    const ids = await seedServer(s);
    const mk = async (domain: string) =>
      (
        await s.app.inject({
          method: 'POST',
          url: '/api/v1/sites',
          headers: { authorization: `Bearer ${s.token}` },
          payload: { ...ids, type: 'static-html', domain, ssl: false, options: {} },
        })
      ).json().uuid as string;
    siteA = await mk('a.example.com');
    siteB = await mk('b.example.com');
  });
  afterAll(async () => s?.stop());

  it('one job at a time per site, in order; other sites proceed', async () => {
    const t0 = new Date(Date.now() + 1000);
    // A second job for site A, queued after its create job.
    await s.storage.db.transaction().execute(async (trx) => {
      const site = await trx
        .selectFrom('sites')
        .select(['uuid', 'team_uuid'])
        .where('uuid', '=', siteA)
        .executeTakeFirstOrThrow();
      await enqueueOperation(trx, { site, kind: 'delete', params: {}, now: new Date(Date.now() + 10).toISOString() });
    });
    const first = await queue.claim('w1', t0, 60_000);
    const second = await queue.claim('w2', t0, 60_000);
    const third = await queue.claim('w3', t0, 60_000);
    expect(new Set([first?.site_uuid, second?.site_uuid])).toEqual(new Set([siteA, siteB]));
    expect(third).toBeNull(); // A's delete waits for A's create
    const createA = [first, second].find((j) => j?.site_uuid === siteA);
    expect(await queue.complete(createA!)).toBe(true);
    const next = await queue.claim('w3', t0, 60_000);
    expect(next).toMatchObject({ site_uuid: siteA, kind: 'site.delete' });
  });

  it('a job whose lease ran out (worker crashed) is claimed again, and the old worker loses it', async () => {
    const t0 = new Date(Date.now() + 5000);
    const bJob = await s.storage.db
      .selectFrom('jobs')
      .selectAll()
      .where('site_uuid', '=', siteB)
      .where('status', '=', 'running')
      .executeTakeFirstOrThrow();
    expect(await queue.claim('w9', t0, 60_000)).toBeNull();
    const afterLease = new Date(t0.getTime() + 120_000);
    const reclaimed = await queue.claim('w9', afterLease, 60_000);
    expect(reclaimed).toMatchObject({ uuid: bJob.uuid, locked_by: 'w9', attempts: 2 });
    expect(await queue.heartbeat(bJob, afterLease, 60_000)).toBe(false);
    expect(await queue.heartbeat(reclaimed!, afterLease, 60_000)).toBe(true);
  });

  it('retryLater puts a job back with a later run_at', async () => {
    const job = await s.storage.db.selectFrom('jobs').selectAll().where('site_uuid', '=', siteB).executeTakeFirstOrThrow();
    await s.storage.db.updateTable('jobs').set({ status: 'done' }).where('uuid', '!=', job.uuid).execute();
    const now = new Date(Date.now() + 200_000);
    expect(await queue.retryLater(job, 'connection refused', new Date(now.getTime() + 30_000))).toBe(true);
    expect(await queue.claim('w1', now, 60_000)).toBeNull();
    expect(await queue.claim('w1', new Date(now.getTime() + 31_000), 60_000)).toMatchObject({ uuid: job.uuid });
  });

  it('concurrent claimers never get the same job', async () => {
    await s.storage.db.updateTable('jobs').set({ status: 'done' }).execute();
    const ids = await seedServer(s);
    const uuids: string[] = [];
    for (let i = 0; i < 10; i++) {
      const r = await s.app.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: { authorization: `Bearer ${s.token}` },
        payload: {
          ...ids,
          type: 'static-html',
          domain: `c${i}-${randomUUID().slice(0, 4)}.example.com`,
          ssl: false,
          options: {},
        },
      });
      uuids.push(r.json().uuid);
    }
    const t = new Date(Date.now() + 300_000);
    const claimed = await Promise.all(Array.from({ length: 20 }, (_, i) => queue.claim(`c${i}`, t, 60_000)));
    const got = claimed.filter((j) => j && uuids.includes(j.site_uuid)).map((j) => j!.uuid);
    expect(new Set(got).size).toBe(got.length);
    expect(got.length).toBe(10);
  });
});
