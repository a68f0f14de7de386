import type { Kysely, Migrator } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '../../src/jobs/queue.js';
import type { Database } from '../../src/storage/schema.js';
import { type MigrationDatabase, migrationDatabase } from '../support/migration-database.js';
import { TEST_DB } from '../support/test-service.js';
import { enqueueTeamJobs, seedTeam } from './support/team-jobs.js';

/** Migration 007 on a database that already has jobs: each job takes its team from its operation. */
describe(`migration 007 (fair claim) on a ${TEST_DB} database with queued jobs`, () => {
  let db: Kysely<Database>;
  let migrator: Migrator;
  let database: MigrationDatabase;
  beforeAll(async () => {
    database = await migrationDatabase('m007');
    ({ db, migrator } = database);
  });
  afterAll(() => database?.drop());

  it('fills every job’s team, and the fair claim then serves the teams in turn', async () => {
    const before = await migrator.migrateTo('005_sites_by_team');
    expect(before.error).toBeUndefined();
    const base = Date.parse('2026-02-01T00:00:00Z');
    const a = await seedTeam(db, 'team-a');
    const b = await seedTeam(db, 'team-b');
    const at = (offset: number) => (i: number) => new Date(base + offset + i).toISOString();
    const sitesA = await enqueueTeamJobs(db, a, { sites: 20, jobsPerSite: 2, at: at(0), beforeFairClaimMigration: true });
    const sitesB = await enqueueTeamJobs(db, b, { sites: 2, at: at(1_000), beforeFairClaimMigration: true });

    const after = await migrator.migrateToLatest();
    expect(after.error).toBeUndefined();
    expect(after.results?.map((r) => [r.migrationName, r.status])).toContainEqual(['007_fair_claim', 'Success']);

    const rows = await db.selectFrom('jobs').select(['site_uuid', 'team_uuid']).execute();
    expect(rows).toHaveLength(42);
    for (const row of rows) expect(row.team_uuid).toBe(sitesA.includes(row.site_uuid) ? a.team : b.team);
    expect(sitesB).toHaveLength(2);

    // B's two jobs are the newest, yet they are the 2nd and 4th claims.
    const queue = new JobQueue(db, TEST_DB);
    const now = new Date(base + 60_000);
    const teams: (string | undefined)[] = [];
    for (let i = 0; i < 5; i++) teams.push((await queue.claim(`w${i}`, now, 60_000))?.team_uuid);
    expect(teams).toEqual([a.team, b.team, a.team, b.team, a.team]);
  });
});
