import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { JobQueue, type JobRow } from '../../src/jobs/queue.js';
import { startTestService, TEST_DB, type TestService } from '../support/test-service.js';
import { enqueueOneSiteJob, enqueueTeamJobs, type SeededTeam, seedTeam } from './support/team-jobs.js';

/**
 * The claim is fair between teams (issue 10): a team that enqueued thousands of jobs takes turns
 * with the others instead of going first until its backlog is gone. Round-robin by the claim that
 * last served each team (jobs/queue.ts).
 */
describe(`fair job claim between teams on ${TEST_DB}`, () => {
  let s: TestService;
  let queue: JobQueue;
  let a: SeededTeam;
  let b: SeededTeam;
  let c: SeededTeam;
  const base = Date.parse('2026-03-01T00:00:00Z');
  const iso = (ms: number) => new Date(ms).toISOString();
  const now = new Date(base + 86_400_000);
  const claimN = async (n: number) => {
    const got: JobRow[] = [];
    for (let i = 0; i < n; i++) {
      const job = await queue.claim(`w${i}`, now, 600_000);
      if (job) got.push(job);
    }
    return got;
  };

  beforeAll(async () => {
    s = await startTestService({ env: { SITEPLANE_WORKER: 'off' } });
    queue = new JobQueue(s.storage.db, s.storage.dialect);
    a = await seedTeam(s.storage.db, 'team-a');
    b = await seedTeam(s.storage.db, 'team-b');
    c = await seedTeam(s.storage.db, 'team-c');
  });
  beforeEach(async () => {
    // Each case starts from an empty queue and no turns taken.
    await s.storage.db.updateTable('jobs').set({ status: 'done', lease_until: null }).execute();
    await s.storage.db.deleteFrom('team_claims').execute();
  });
  afterAll(async () => s?.stop());

  it("a team's 2,000 older jobs do not starve two teams that enqueued one job each after them", async () => {
    await enqueueTeamJobs(s.storage.db, a, { sites: 2_000, at: (i) => iso(base + i) });
    const siteB = await enqueueOneSiteJob(s.storage.db, b, iso(base + 10_000));
    const siteC = await enqueueOneSiteJob(s.storage.db, c, iso(base + 20_000));
    const next = await claimN(3);
    // The old claim (oldest due job first) gave these three claims to team A.
    expect(next.map((j) => j.site_uuid)).toEqual(expect.arrayContaining([siteB, siteC]));
    expect(new Set(next.map((j) => j.team_uuid))).toEqual(new Set([a.team, b.team, c.team]));
  });

  it('teams that all have many jobs take turns: over N claims their counts are within 1', async () => {
    // A's jobs are all older than B's, B's older than C's: by age alone A would take every claim.
    await enqueueTeamJobs(s.storage.db, a, { sites: 60, at: (i) => iso(base + i) });
    await enqueueTeamJobs(s.storage.db, b, { sites: 60, at: (i) => iso(base + 1_000 + i) });
    await enqueueTeamJobs(s.storage.db, c, { sites: 60, at: (i) => iso(base + 2_000 + i) });
    const claimed = await claimN(31);
    expect(claimed).toHaveLength(31);
    for (let n = 1; n <= claimed.length; n++) {
      const counts = [a, b, c].map((t) => claimed.slice(0, n).filter((j) => j.team_uuid === t.team).length);
      expect(Math.max(...counts) - Math.min(...counts), `after ${n} claims: ${counts.join('/')}`).toBeLessThanOrEqual(1);
    }
    // Round-robin: every three consecutive claims serve the three teams.
    for (let i = 0; i + 3 <= claimed.length; i += 3) {
      expect(new Set(claimed.slice(i, i + 3).map((j) => j.team_uuid)).size).toBe(3);
    }
  });

  it('within one team the order is unchanged: run_at, then created_at', async () => {
    // Enqueued in one order, due in another; two share a run_at and differ by created_at.
    const runAt = [5, 1, 3, 3, 2, 4].map((m) => iso(base + m * 60_000));
    const created = [0, 1, 3, 2, 4, 5].map((m) => iso(base + m));
    const sites = await enqueueTeamJobs(s.storage.db, a, { sites: runAt.length, at: (i) => created[i]! });
    for (const [i, site] of sites.entries())
      await s.storage.db.updateTable('jobs').set({ run_at: runAt[i] }).where('site_uuid', '=', site).execute();
    const claimed = await claimN(runAt.length + 1);
    expect(claimed.map((j) => sites.indexOf(j.site_uuid))).toEqual([1, 4, 3, 2, 5, 0]);
  });

  it("a site's jobs still run one at a time, in order, whoever's turn it is", async () => {
    // Team A: one site with three jobs. Team B: three sites with one job each.
    const [siteA] = await enqueueTeamJobs(s.storage.db, a, { sites: 1, jobsPerSite: 3, at: (i) => iso(base + i) });
    if (!siteA) throw new Error('no site');
    await enqueueTeamJobs(s.storage.db, b, { sites: 3, at: (i) => iso(base + 100 + i) });
    const first = await claimN(5);
    // A's first job, then only B's: A's next job waits for its first although it is A's turn.
    expect(first.map((j) => j.team_uuid)).toEqual([a.team, b.team, b.team, b.team]);
    const aJobs = await s.storage.db
      .selectFrom('jobs')
      .selectAll()
      .where('site_uuid', '=', siteA)
      .orderBy('created_at')
      .execute();
    expect(first[0]?.uuid).toBe(aJobs[0]?.uuid);
    expect(await queue.complete(first[0]!)).toBe(true);
    const second = await claimN(2);
    expect(second.map((j) => j.uuid)).toEqual([aJobs[1]?.uuid]);
    expect(await queue.complete(second[0]!)).toBe(true);
    expect((await claimN(1)).map((j) => j.uuid)).toEqual([aJobs[2]?.uuid]);
  });

  it("a job whose lease ran out is offered again in its team's turn, and the old claim loses it", async () => {
    await enqueueTeamJobs(s.storage.db, a, { sites: 2, at: (i) => iso(base + i) });
    await enqueueTeamJobs(s.storage.db, b, { sites: 2, at: (i) => iso(base + 100 + i) });
    const [first] = await claimN(1);
    expect(first?.team_uuid).toBe(a.team);
    const later = new Date(now.getTime() + 700_000); // past first's lease
    const again = await queue.claim('w-late', later, 600_000);
    // B's turn now (A was served last); then A's turn takes A's expired job before A's newer one.
    expect(again?.team_uuid).toBe(b.team);
    const third = await queue.claim('w-late2', later, 600_000);
    expect(third).toMatchObject({ uuid: first?.uuid, locked_by: 'w-late2', attempts: 2 });
    expect(await queue.heartbeat(first!, later, 600_000)).toBe(false);
  });

  it('concurrent claims across teams each get a different job, none fails', async () => {
    await enqueueTeamJobs(s.storage.db, a, { sites: 30, at: (i) => iso(base + i) });
    await enqueueTeamJobs(s.storage.db, b, { sites: 30, at: (i) => iso(base + 100 + i) });
    await enqueueTeamJobs(s.storage.db, c, { sites: 30, at: (i) => iso(base + 200 + i) });
    const claimed = await Promise.all(Array.from({ length: 45 }, (_, i) => queue.claim(`c${i}`, now, 600_000)));
    const got = claimed.filter((j): j is JobRow => j !== null);
    expect(new Set(got.map((j) => j.uuid)).size).toBe(got.length);
    expect(got.length).toBeGreaterThan(0);
    // Whatever the concurrent claims missed, sequential claims then take: every job exactly once.
    const rest = await claimN(90 - got.length + 1);
    expect(new Set([...got, ...rest].map((j) => j.uuid)).size).toBe(90);
  });
});
