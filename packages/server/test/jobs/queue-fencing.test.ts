import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type JobClaim, JobQueue, type JobRow } from '../../src/jobs/queue.js';
import { seedServer, startTestService, TEST_DB, type TestService } from '../support/test-service.js';

/**
 * Fencing: a worker stalls past its lease, another worker claims the job again; when the first
 * wakes up, whatever it tries to record about the job is refused, and the new owner's goes through.
 */
describe(`a claim whose lease ran out changes nothing on ${TEST_DB} (ARCHITECTURE §1 jobs/)`, () => {
  let s: TestService;
  let queue: JobQueue;
  let ids: { server: string; serverUser: string };
  beforeAll(async () => {
    s = await startTestService({ env: { SITEPLANE_WORKER: 'off' } });
    queue = new JobQueue(s.storage.db, s.storage.dialect);
    ids = await seedServer(s);
  });
  afterAll(async () => s?.stop());

  const jobRow = (uuid: string) => s.storage.db.selectFrom('jobs').selectAll().where('uuid', '=', uuid).executeTakeFirstOrThrow();

  /** A new site's create job, claimed by `first`; its lease runs out and `second` claims it. */
  async function claimedTwice(first: string, second: string): Promise<{ stale: JobRow; owner: JobRow }> {
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${s.token}` },
      payload: { ...ids, type: 'static-html', domain: `f-${randomUUID().slice(0, 8)}.example.com`, ssl: false, options: {} },
    });
    const siteUuid = res.json().uuid as string;
    // Only this site's job is claimable, so the claims below take it.
    await s.storage.db.updateTable('jobs').set({ status: 'done' }).where('site_uuid', '!=', siteUuid).execute();
    const t0 = new Date(Date.now() + 1_000);
    const stale = await queue.claim(first, t0, 60_000);
    expect(await queue.claim(second, new Date(t0.getTime() + 30_000), 60_000)).toBeNull(); // lease still valid
    const owner = await queue.claim(second, new Date(t0.getTime() + 61_000), 60_000);
    expect(stale).toMatchObject({ site_uuid: siteUuid, locked_by: first, attempts: 1 });
    expect(owner).toMatchObject({ uuid: stale?.uuid, locked_by: second, attempts: 2 });
    return { stale: stale as JobRow, owner: owner as JobRow };
  }

  const later = new Date(Date.now() + 3_600_000);
  const outcomes: [string, (claim: JobClaim) => Promise<boolean>, Partial<JobRow>][] = [
    ['complete', (claim) => queue.complete(claim), { status: 'done', lease_until: null }],
    ['fail', (claim) => queue.fail(claim, 'gave up'), { status: 'failed', lease_until: null, last_error: 'gave up' }],
    [
      'retryLater',
      (claim) => queue.retryLater(claim, 'server busy', later),
      { status: 'queued', locked_by: null, last_error: 'server busy', run_at: later.toISOString() },
    ],
  ];

  it.each(outcomes)("%s: the stale worker's call changes nothing, the new owner's does", async (_name, record, expected) => {
    const { stale, owner } = await claimedTwice('w1', 'w2');
    const before = await jobRow(owner.uuid);
    expect(await record(stale)).toBe(false);
    expect(await jobRow(owner.uuid)).toEqual(before);
    expect(await queue.heartbeat(stale, new Date(), 60_000)).toBe(false);
    expect(await jobRow(owner.uuid)).toEqual(before);

    expect(await record(owner)).toBe(true);
    const after = await jobRow(owner.uuid);
    expect(after).toMatchObject(expected);
    // Once the owner recorded the outcome, the stale claim still cannot change it.
    for (const [, again] of outcomes) expect(await again(stale)).toBe(false);
    expect(await jobRow(owner.uuid)).toEqual(after);
  });

  it('tells two claims of the same worker apart (it stalled, then claimed its own job again)', async () => {
    const { stale, owner } = await claimedTwice('w1', 'w1');
    expect(await queue.heartbeat(stale, new Date(), 60_000)).toBe(false);
    expect(await queue.complete(stale)).toBe(false);
    expect(await queue.fail(stale, 'stale')).toBe(false);
    expect((await jobRow(owner.uuid)).status).toBe('running');
    expect(await queue.heartbeat(owner, new Date(), 60_000)).toBe(true);
    expect(await queue.complete(owner)).toBe(true);
    expect(await jobRow(owner.uuid)).toMatchObject({ status: 'done', locked_by: 'w1', attempts: 2 });
  });
});
