import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, type Dialect, Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '../../src/jobs/queue.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import type { Database } from '../../src/storage/schema.js';
import { startTestService, TEST_DB, type TestService } from '../support/test-service.js';
import { enqueueTeamJobs, seedTeam } from './support/team-jobs.js';

/**
 * The claim's plan on a database without statistics: SQLite as the service runs it (never
 * ANALYZEd), PostgreSQL before autovacuum has analyzed a table that filled quickly. Without them,
 * both found a team's running jobs by reading every unfinished job of the team, and SQLite found the
 * teams with work by reading and sorting every unfinished job: a claim's cost grew with the queue.
 * The claim names its indexes on SQLite (jobs/queue.ts sqliteIndexedBy), and its read of expired
 * leases has an index of its own (migration 018). These read the plan the database makes of the SQL
 * the queue sends, with 600 queued jobs of two teams.
 */
const base = Date.parse('2026-03-01T00:00:00Z');

/** Queues the jobs through `db`, then claims through a second handle on the same database that logs its SQL. */
async function claimSqlWithQueuedJobs(db: Kysely<Database>, dialect: () => Dialect, kind: 'sqlite' | 'postgres') {
  for (const name of ['team-a', 'team-b']) {
    const team = await seedTeam(db, name);
    await enqueueTeamJobs(db, team, { sites: 300, at: (i) => new Date(base + i * 1000).toISOString() });
  }
  const seen: CompiledQuery[] = [];
  const logged = new Kysely<Database>({
    dialect: dialect(),
    log: (e) => {
      if (e.level === 'query') seen.push(e.query);
    },
  });
  return {
    logged,
    claim: async () => {
      await new JobQueue(logged, kind).claim('plan', new Date(base + 86_400_000), 60_000);
      const claim = seen.find((q) => q.sql.includes('UPDATE jobs'));
      if (!claim) throw new Error('the claim SQL was not sent');
      return claim;
    },
  };
}

describe.skipIf(TEST_DB !== 'sqlite')('the job claim on SQLite without statistics', () => {
  const dir = mkdtempSync(join(tmpdir(), 'siteplane-claim-plan-'));
  const file = join(dir, 'siteplane.db');
  let storage: Storage;
  let plan: string[];

  beforeAll(async () => {
    storage = await openStorage({ sqliteFile: file });
    const handle = new SQLite(file);
    const { logged, claim } = await claimSqlWithQueuedJobs(storage.db, () => new SqliteDialect({ database: handle }), 'sqlite');
    const sent = await claim();
    plan = (handle.prepare(`EXPLAIN QUERY PLAN ${sent.sql}`).all(...sent.parameters) as { detail: string }[]).map(
      (r) => r.detail,
    );
    await logged.destroy();
  });
  afterAll(async () => {
    await storage?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('walks the teams with work one index step each (jobs_waiting), sorting nothing', () => {
    const walk = plan.filter((d) => /^SEARCH (jobs|n) USING/.test(d) && !d.includes('(uuid=?)'));
    expect(walk).toEqual([
      'SEARCH jobs USING INDEX jobs_waiting (team_uuid>?)',
      'SEARCH n USING INDEX jobs_waiting (team_uuid>?)',
    ]);
  });

  it("reads a team's due jobs in order and its running ones by lease, not every unfinished job", () => {
    expect(plan.filter((d) => d.startsWith('SEARCH j '))).toEqual([
      'SEARCH j USING INDEX jobs_waiting (team_uuid=? AND run_at<?)',
      'SEARCH j USING INDEX jobs_running (team_uuid=? AND lease_until<?)',
    ]);
  });
});

describe.skipIf(TEST_DB !== 'postgres')('the job claim on PostgreSQL before the jobs table is analyzed', () => {
  let s: TestService;
  let scans: { index: string; filter: string }[];

  beforeAll(async () => {
    s = await startTestService({ env: { SITEPLANE_WORKER: 'off' } });
    const pool = new pg.Pool({ connectionString: s.databaseUrl ?? '', max: 1 });
    const { logged, claim } = await claimSqlWithQueuedJobs(s.storage.db, () => new PostgresDialect({ pool }), 'postgres');
    const sent = await claim();
    const explained = await logged.executeQuery<{ 'QUERY PLAN': unknown }>(
      CompiledQuery.raw(`EXPLAIN (FORMAT JSON) ${sent.sql}`, [...sent.parameters]),
    );
    scans = [];
    const walk = (node: Record<string, unknown>) => {
      if (typeof node['Index Name'] === 'string')
        scans.push({ index: node['Index Name'], filter: `${node['Index Cond'] ?? ''} ${node.Filter ?? ''}` });
      for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
    };
    const [top] = (explained.rows[0]?.['QUERY PLAN'] ?? []) as { Plan: Record<string, unknown> }[];
    walk(top?.Plan ?? {});
    await logged.destroy();
  });
  afterAll(async () => s?.stop());

  it("reads a team's expired leases through an index of running jobs, not the team's every unfinished job", () => {
    const expired = scans.filter((scan) => scan.filter.includes('lease_until'));
    expect(expired.length).toBeGreaterThan(0);
    expect(expired.map((scan) => scan.index)).not.toContain('jobs_waiting');
  });
});
