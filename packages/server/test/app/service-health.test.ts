import { describe, expect, it } from 'vitest';
import { AcmeOrderLog } from '../../src/app/acme-order-log.js';
import { serviceHealth, WORKER_STALLED_AFTER_MS } from '../../src/app/service-health.js';
import type { Worker } from '../../src/jobs/worker.js';
import { seedServer, startTestService, TEST_DB } from '../support/test-service.js';

/**
 * The worker part of the health check against real queue rows: a worker whose loop comes round
 * but leaves a job it could claim waiting is stalled; one that is busy, or whose only waiting job
 * is behind its site's earlier one, is not.
 */
describe(`worker health from the queue on ${TEST_DB}`, () => {
  it('stalled only when a free slot leaves a claimable job waiting past the threshold', async () => {
    let offset = 0;
    const clock = { now: () => new Date(Date.now() + offset) };
    // Worker off: the jobs stay queued; the health check is given a stand-in worker's state.
    const s = await startTestService({ clock, env: { SITEPLANE_WORKER: 'off' } });
    try {
      let state = { lastPassAt: 0, freeSlots: 1 };
      const worker = { state: () => state } as unknown as Worker;
      const check = serviceHealth({ db: s.storage.db, clock, worker, acme: new AcmeOrderLog() });
      const workerPart = async () => {
        state = { ...state, lastPassAt: clock.now().getTime() };
        return (await check()).parts.worker;
      };
      const ids = await seedServer(s);
      const site = await s.app.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: { authorization: `Bearer ${s.token}` },
        payload: { ...ids, type: 'static-html', domain: 'waits.example.com', ssl: false, options: {} },
      });
      expect(site.statusCode).toBe(202);
      expect(await workerPart()).toBe('ok'); // just queued
      offset += WORKER_STALLED_AFTER_MS + 1_000;
      expect(await workerPart()).toBe('stalled');
      state = { ...state, freeSlots: 0 };
      expect(await workerPart()).toBe('ok'); // busy, not stalled
      state = { ...state, freeSlots: 1 };
      // The site's create runs (lease fresh); its later delete waits behind it, which is no stall.
      const now = clock.now().toISOString();
      await s.storage.db
        .updateTable('jobs')
        .set({
          status: 'running',
          lease_until: new Date(clock.now().getTime() + 60_000).toISOString(),
          locked_by: 'w',
          run_at: now,
        })
        .execute();
      const del = await s.app.inject({
        method: 'DELETE',
        url: `/api/v1/sites/${site.json().uuid}`,
        headers: { authorization: `Bearer ${s.token}` },
      });
      expect(del.statusCode).toBe(202);
      offset += WORKER_STALLED_AFTER_MS + 1_000;
      // The delete has waited past the threshold, but behind its site's create (lease run out 4 min ago).
      expect(await workerPart()).toBe('ok');
      offset += 2 * 60_000;
      // Now the running job's lease ran out longer ago than the threshold: nothing took it over.
      expect(await workerPart()).toBe('stalled');
      await s.storage.db
        .updateTable('jobs')
        .set({ lease_until: new Date(clock.now().getTime() + 60_000).toISOString() })
        .where('status', '=', 'running')
        .execute();
      expect(await workerPart()).toBe('ok');
    } finally {
      await s.stop();
    }
  });
});
