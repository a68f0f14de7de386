import type { SiteTypeId } from '@siteplane/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '../../src/jobs/queue.js';
import type { Worker } from '../../src/jobs/worker.js';
import type { Recipe } from '../../src/provisioning/step.js';
import { fakeRecipes, seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';
import { secondWorker } from './support/second-worker.js';

/**
 * A poison job: every claim of it ends with its lease running out (the worker process dies in the
 * same step each time). After max_attempts claims it fails for good instead of being claimed after
 * every restart forever (ARCHITECTURE §1 jobs/).
 */
describe(`a job whose lease ran out max_attempts times on ${TEST_DB}`, () => {
  let s: TestService;
  let worker: Worker | null = null;
  const created: string[] = [];
  const recipes = (type: SiteTypeId): Recipe => {
    const recipe = fakeRecipes()(type);
    return {
      ...recipe,
      create: (site) => {
        created.push(site.uuid);
        return recipe.create(site);
      },
    };
  };
  beforeAll(async () => {
    // No in-process worker: the test plays the crashed workers by hand.
    s = await startTestService({ env: { SITEPLANE_WORKER: 'off' } });
  });
  afterAll(async () => {
    await worker?.stop();
    await s?.stop();
  });

  it('fails the site, naming the job and the step each attempt died in, and is never claimed again', async () => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${s.token}` },
      payload: { ...(await seedServer(s)), type: 'static-html', domain: 'poison.example.com', ssl: false, options: {} },
    });
    const site = res.json().uuid as string;
    const operation = res.json().operation.uuid as string;
    const queue = new JobQueue(s.storage.db, s.storage.dialect);
    const job = await s.storage.db.selectFrom('jobs').selectAll().where('site_uuid', '=', site).executeTakeFirstOrThrow();
    for (let attempt = 1; attempt <= job.max_attempts; attempt++) {
      const claim = await queue.claim(`crashed-${attempt}`, new Date(), 60_000);
      expect(claim).toMatchObject({ uuid: job.uuid, attempts: attempt });
      // Each run got as far as the vhost step and died there, leaving the step running.
      await s.storage.db
        .insertInto('operation_steps')
        .values({
          operation_uuid: operation,
          idx: 1,
          name: 'ensure nginx vhost',
          status: 'running',
          exit_code: null,
          started_at: new Date().toISOString(),
          finished_at: null,
        })
        .onConflict((oc) => oc.doNothing())
        .execute();
      // The process died: nobody extends the lease, which runs out.
      await s.storage.db
        .updateTable('jobs')
        .set({ lease_until: '2000-01-01T00:00:00.000Z' })
        .where('uuid', '=', job.uuid)
        .execute();
    }

    worker = secondWorker(s, recipes, 60_000);
    worker.start();
    const failed = await waitForStatus(s, site, ['failed', 'installed']);
    expect(failed.status).toBe('failed');
    expect(created).toEqual([]); // not run a sixth time

    const row = await s.storage.db.selectFrom('sites').select('failure').where('uuid', '=', site).executeTakeFirstOrThrow();
    const failure = JSON.parse(row.failure ?? '{}');
    expect(failure).toMatchObject({ operation, step: 'ensure nginx vhost' });
    expect(failure.message).toContain(job.uuid);
    expect(failure.message).toMatch(/5 attempts/);
    const after = await s.storage.db.selectFrom('jobs').selectAll().where('uuid', '=', job.uuid).executeTakeFirstOrThrow();
    expect(after).toMatchObject({ status: 'failed', lease_until: null });
    expect(after.last_error).toContain(job.uuid);
    const op = await s.app.inject({
      method: 'GET',
      url: `/api/v1/operations/${operation}`,
      headers: { authorization: `Bearer ${s.token}` },
    });
    expect(op.json()).toMatchObject({ status: 'failed', steps: [{ name: 'ensure nginx vhost', status: 'failed' }] });

    // After any number of restarts, nothing claims it again.
    await worker.stop();
    worker = null;
    expect(await queue.claim('after-restart', new Date(Date.now() + 86_400_000), 60_000)).toBeNull();
  });
});
