import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { type CompiledQuery, Kysely, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '../../src/jobs/queue.js';
import { openStorage, type Storage } from '../../src/storage/database.js';
import type { Database } from '../../src/storage/schema.js';
import { TEST_DB } from '../support/test-service.js';
import { enqueueTeamJobs, seedTeam } from './support/team-jobs.js';

/**
 * The claim's plan on SQLite as the service runs it: never ANALYZEd, so without statistics. There
 * SQLite found the teams with work, and a team's running jobs, by reading every unfinished job and
 * sorting them: a claim cost grew with the queue. The claim names its indexes (jobs/queue.ts
 * sqliteIndexedBy); this reads the plan SQLite makes of the SQL the queue sends.
 */
describe.skipIf(TEST_DB !== 'sqlite')('the job claim on SQLite without statistics', () => {
  const dir = mkdtempSync(join(tmpdir(), 'siteplane-claim-plan-'));
  const file = join(dir, 'siteplane.db');
  let storage: Storage;
  let plan: string[];

  beforeAll(async () => {
    storage = await openStorage({ sqliteFile: file });
    const base = Date.parse('2026-03-01T00:00:00Z');
    for (const name of ['team-a', 'team-b']) {
      const team = await seedTeam(storage.db, name);
      await enqueueTeamJobs(storage.db, team, { sites: 300, at: (i) => new Date(base + i * 1000).toISOString() });
    }
    // The claim's SQL as the queue sends it, caught by a second handle on the same file with a query log.
    const seen: CompiledQuery[] = [];
    const handle = new SQLite(file);
    const logged = new Kysely<Database>({
      dialect: new SqliteDialect({ database: handle }),
      log: (e) => {
        if (e.level === 'query') seen.push(e.query);
      },
    });
    await new JobQueue(logged, 'sqlite').claim('plan', new Date(base + 86_400_000), 60_000);
    const claim = seen.find((q) => q.sql.includes('UPDATE jobs'));
    if (!claim) throw new Error('the claim SQL was not sent');
    const rows = handle.prepare(`EXPLAIN QUERY PLAN ${claim.sql}`).all(...claim.parameters) as { detail: string }[];
    plan = rows.map((r) => r.detail);
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

  it("reads a team's due jobs in order and its running ones by status, not every unfinished job", () => {
    expect(plan.filter((d) => d.startsWith('SEARCH j '))).toEqual([
      'SEARCH j USING INDEX jobs_waiting (team_uuid=? AND run_at<?)',
      'SEARCH j USING INDEX jobs_claim (status=?)',
    ]);
  });
});
