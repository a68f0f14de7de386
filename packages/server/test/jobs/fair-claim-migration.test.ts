import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobQueue } from '../../src/jobs/queue.js';
import { migrations } from '../../src/storage/migrations/index.js';
import type { Database } from '../../src/storage/schema.js';
import { TEST_DB } from '../support/test-service.js';
import { enqueueTeamJobs, seedTeam } from './support/team-jobs.js';

const PG_ADMIN = process.env.SITEPLANE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Migration 007 on a database that already has jobs: each job takes its team from its operation. */
describe(`migration 007 (fair claim) on a ${TEST_DB} database with queued jobs`, () => {
  const dir = mkdtempSync(join(tmpdir(), 'siteplane-m007-'));
  const dbName = `sp_m007_${randomBytes(6).toString('hex')}`;
  let db: Kysely<Database>;
  let migrator: Migrator;
  beforeAll(async () => {
    if (TEST_DB === 'postgres') {
      const admin = new pg.Client({ connectionString: PG_ADMIN });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${dbName}`);
      await admin.end();
      const pool = new pg.Pool({ connectionString: PG_ADMIN.replace(/\/[^/]*$/, `/${dbName}`), max: 4 });
      db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    } else {
      const sqlite = new SQLite(join(dir, 'db.sqlite'));
      sqlite.pragma('foreign_keys = ON');
      db = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
    }
    migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  });
  afterAll(async () => {
    await db?.destroy();
    rmSync(dir, { recursive: true, force: true });
    if (TEST_DB === 'postgres') {
      const admin = new pg.Client({ connectionString: PG_ADMIN });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin.end();
    }
  });

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
