import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import type { Worker } from '../../src/jobs/worker.js';
import { seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';
import { type HeldRecipe, heldRecipe, secondWorker } from './support/second-worker.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A site job whose worker loses its lease while a step is held: another worker claims the job and
 * runs it to its end; when the held step is released, the first run must neither run on nor
 * record anything (ARCHITECTURE §1 jobs/: claimed with a lease).
 */
describe(`a site job run that lost its lease on ${TEST_DB}`, () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const stop of cleanup.splice(0).reverse()) await stop();
  });

  interface TakenOver {
    s: TestService;
    h: HeldRecipe;
    site: string;
    w2: Worker;
    /** The service's worker's log lines at warn and above (JSON). */
    logged: { level: number; msg: string }[];
  }

  /** The service's worker (one job at a time) runs the create up to the held step; then w2 takes the job over. */
  async function takenOver(options: { leaseMs: number; stepAfterHeld: boolean; secondRunFails: boolean }): Promise<TakenOver> {
    const h = heldRecipe(options);
    const logged: TakenOver['logged'] = [];
    const logger = pino({ level: 'warn' }, { write: (line: string) => void logged.push(JSON.parse(line)) });
    const s = await startTestService({ recipes: h.recipes, leaseMs: options.leaseMs, logger, env: { WORKER_CONCURRENCY: '1' } });
    cleanup.push(() => s.stop());
    const created = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${s.token}` },
      payload: { ...(await seedServer(s)), type: 'static-html', domain: 'held.example.com', ssl: false, options: {} },
    });
    const site = created.json().uuid as string;
    await h.held;
    const w2 = secondWorker(s, h.recipes, options.leaseMs);
    cleanup.push(() => w2.stop());
    w2.start();
    const jobs = s.storage.db.selectFrom('jobs').where('site_uuid', '=', site);
    for (let i = 0; ; i++) {
      // The lease runs out (as after a stall); the first run's heartbeat may extend it again
      // before w2 polls, so until w2 holds the job.
      await s.storage.db
        .updateTable('jobs')
        .set({ lease_until: '2000-01-01T00:00:00.000Z' })
        .where('site_uuid', '=', site)
        .where('locked_by', '!=', w2.id)
        .execute();
      w2.wake();
      await sleep(25);
      if ((await jobs.select('locked_by').executeTakeFirstOrThrow()).locked_by === w2.id) break;
      if (i > 200) throw new Error('w2 never claimed the job');
    }
    return { s, h, site, w2, logged };
  }

  /** What a run records: the site, its operations (and their steps), its job. */
  async function recorded(s: TestService, site: string, withSteps: boolean) {
    const db = s.storage.db;
    const operations = await db.selectFrom('operations').selectAll().where('site_uuid', '=', site).execute();
    return {
      site: await db.selectFrom('sites').selectAll().where('uuid', '=', site).executeTakeFirstOrThrow(),
      operations,
      jobs: await db.selectFrom('jobs').selectAll().where('site_uuid', '=', site).execute(),
      steps: withSteps
        ? await db
            .selectFrom('operation_steps')
            .selectAll()
            .where(
              'operation_uuid',
              'in',
              operations.map((o) => o.uuid),
            )
            .orderBy('idx')
            .execute()
        : null,
    };
  }

  async function logLines(s: TestService, operation: string): Promise<string[]> {
    const rows = await s.storage.db
      .selectFrom('operation_logs')
      .select('line')
      .where('operation_uuid', '=', operation)
      .orderBy('seq')
      .execute();
    return rows.map((r) => r.line);
  }

  /** The stale run has ended; its worker logged the lost lease at warn and recorded nothing itself. */
  async function expectStaleRunAbandoned(t: TakenOver, before: Awaited<ReturnType<typeof recorded>>) {
    await t.s.worker?.stop();
    expect(await recorded(t.s, t.site, before.steps !== null)).toEqual(before);
    expect(before.jobs).toMatchObject([{ locked_by: t.w2.id, attempts: 2 }]);
    expect(before.operations).toHaveLength(1);
    const lines = await logLines(t.s, before.operations[0]!.uuid);
    expect(lines).toContain('resuming (attempt 2)');
    expect(lines.some((l) => l.includes('attempt 1 lost its lease') && l.includes('recorded no outcome'))).toBe(true);
    expect(t.logged.filter((l) => l.level === 40 && l.msg.includes('attempt 1 lost its lease'))).toHaveLength(1);
    expect(t.logged.filter((l) => l.level >= 50)).toEqual([]);
  }

  it('stops before its next step and records nothing; the new owner installs the site', async () => {
    // A 300 ms lease: the first worker's heartbeat (every 100 ms) notices the lost claim.
    const t = await takenOver({ leaseMs: 300, stepAfterHeld: true, secondRunFails: false });
    await waitForStatus(t.s, t.site, ['installed']);
    await sleep(600);
    const before = await recorded(t.s, t.site, true);
    expect(before.operations).toMatchObject([{ status: 'succeeded' }]);
    expect(before.steps?.map((s) => s.status)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    t.h.release('succeed');
    await expectStaleRunAbandoned(t, before);
    expect(t.h.ranAfterHeld).toEqual([2]);
  });

  // A long lease: the heartbeat does not beat before the end, so the transaction that records the
  // outcome is what refuses the stale run.
  it.each([
    ['succeeds late: the site stays failed, as the new owner recorded', true, 'succeed', 'failed', 'failed', 'failed'],
    ['fails late: the site stays installed, as the new owner recorded', false, 'fail', 'installed', 'succeeded', 'done'],
  ] as const)('the stale run %s', async (_what, secondRunFails, firstRunEnds, siteStatus, opStatus, jobStatus) => {
    const t = await takenOver({ leaseMs: 60_000, stepAfterHeld: false, secondRunFails });
    await waitForStatus(t.s, t.site, [siteStatus]);
    await sleep(50);
    const before = await recorded(t.s, t.site, false);
    expect(before.operations).toMatchObject([{ status: opStatus }]);
    expect(before.jobs).toMatchObject([{ status: jobStatus }]);
    t.h.release(firstRunEnds);
    await expectStaleRunAbandoned(t, before);
  });
});
