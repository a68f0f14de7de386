/**
 * How long a claim takes with 10^4 queued jobs, and its query plan (not a test: speed is never
 * asserted). The old claim (oldest due job first, no teams) runs on the same rows for comparison.
 *
 *   npx tsx packages/server/test/jobs/support/claim-timing.ts            # SQLite
 *   SITEPLANE_TEST_DB=postgres npx tsx packages/server/test/jobs/support/claim-timing.ts
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { CompiledQuery, Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import pg from 'pg';
import { JobQueue } from '../../../src/jobs/queue.js';
import { openStorage } from '../../../src/storage/database.js';
import type { Database } from '../../../src/storage/schema.js';
import { enqueueTeamJobs, seedTeam } from './team-jobs.js';

const postgres = process.env.SITEPLANE_TEST_DB === 'postgres';
const PG_ADMIN = process.env.SITEPLANE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const teams = Number(process.env.TEAMS ?? 10);
const total = 10_000;
const claims = 200;

const OLD_CLAIM = (now: string, lease: string, lock: string) => `
  UPDATE jobs SET status = 'running', lease_until = '${lease}', locked_by = 'old', attempts = attempts + 1
  WHERE uuid = (
    SELECT j.uuid FROM jobs j
    WHERE ((j.status = 'queued' AND j.run_at <= '${now}') OR (j.status = 'running' AND j.lease_until < '${now}'))
      AND NOT EXISTS (
        SELECT 1 FROM jobs o
        WHERE o.site_uuid = j.site_uuid AND o.status IN ('queued', 'running')
          AND (o.created_at < j.created_at OR (o.created_at = j.created_at AND o.uuid < j.uuid))
      )
    ORDER BY j.run_at, j.created_at
    LIMIT 1
    ${lock}
  )
  RETURNING *`;

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'claim-timing-'));
  let url: string | null = null;
  const dbName = `sp_claim_${randomBytes(4).toString('hex')}`;
  if (postgres) {
    const admin = new pg.Client({ connectionString: PG_ADMIN });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    await admin.end();
    url = PG_ADMIN.replace(/\/[^/]*$/, `/${dbName}`);
  }
  const storage = await openStorage({ databaseUrl: url, sqliteFile: join(dir, 'db.sqlite') });
  const db = storage.db;
  const base = Date.parse('2026-01-01T00:00:00Z');
  for (let t = 0; t < teams; t++) {
    const team = await seedTeam(db, `team-${t}`);
    await enqueueTeamJobs(db, team, { sites: total / teams, at: (i) => new Date(base + (i * teams + t) * 1000).toISOString() });
  }
  await sql`ANALYZE`.execute(db);
  const now = new Date(base + 10 * 86_400_000);
  const nowIso = now.toISOString();
  const lease = new Date(now.getTime() + 60_000).toISOString();

  // The claim's SQL as the queue sends it, caught by a second handle with a query log.
  const seen: CompiledQuery[] = [];
  const logged = new Kysely<Database>({
    dialect: postgres
      ? new PostgresDialect({ pool: new pg.Pool({ connectionString: url ?? '', max: 1 }) })
      : new SqliteDialect({ database: new SQLite(join(dir, 'db.sqlite')) }),
    log: (e) => {
      if (e.level === 'query') seen.push(e.query);
    },
  });
  const explain = async (q: CompiledQuery, analyze: boolean) => {
    const prefix = postgres ? (analyze ? 'EXPLAIN (ANALYZE, COSTS OFF) ' : 'EXPLAIN (COSTS OFF) ') : 'EXPLAIN QUERY PLAN ';
    await logged
      .transaction()
      .execute(async (trx) => {
        const rows = (await trx.executeQuery(CompiledQuery.raw(prefix + q.sql, [...q.parameters]))).rows as Record<
          string,
          unknown
        >[];
        for (const r of rows) console.log(postgres ? r['QUERY PLAN'] : `${r.id} ${r.parent} ${r.detail}`);
        throw new Rollback();
      })
      .catch((e) => {
        if (!(e instanceof Rollback)) throw e;
      });
  };
  await new JobQueue(logged, storage.dialect).claim('plan', now, 60_000);
  const claimSql = seen.find((q) => q.sql.includes('UPDATE jobs'));
  if (!claimSql) throw new Error('claim SQL not seen');
  console.log(`\n== ${storage.dialect}, ${total} queued jobs in ${teams} teams ==\n-- plan of the fair claim:`);
  await explain(claimSql, postgres);
  console.log('-- plan of the old claim:');
  await explain(CompiledQuery.raw(OLD_CLAIM(nowIso, lease, postgres ? 'FOR UPDATE SKIP LOCKED' : ''), []), postgres);

  const reset = async () => {
    await sql`UPDATE jobs SET status = 'queued', attempts = 0, locked_by = NULL, lease_until = NULL`.execute(db);
    await sql`DELETE FROM team_claims`.execute(db);
  };
  const time = async (label: string, claim: () => Promise<unknown>) => {
    await reset();
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < claims; i++) if (!(await claim())) throw new Error(`${label}: nothing claimed`);
    const us = Number(process.hrtime.bigint() - t0) / 1000 / claims;
    console.log(`${label}: ${us.toFixed(0)} µs a claim (mean of ${claims})`);
  };
  const queue = new JobQueue(db, storage.dialect);
  const old = CompiledQuery.raw(OLD_CLAIM(nowIso, lease, postgres ? 'FOR UPDATE SKIP LOCKED' : ''), []);
  for (let round = 0; round < 2; round++) {
    await time('old claim ', async () => (await db.executeQuery(old)).rows[0]);
    await time('fair claim', () => queue.claim('w', now, 60_000));
  }
  // Nothing due: every job waits for a later run_at (retries backing off, say).
  await reset();
  const early = new Date(base - 1000);
  const oldEarly = CompiledQuery.raw(OLD_CLAIM(early.toISOString(), lease, postgres ? 'FOR UPDATE SKIP LOCKED' : ''), []);
  for (const [label, claim] of [
    ['old claim ', async () => (await db.executeQuery(oldEarly)).rows[0]],
    ['fair claim', () => queue.claim('w', early, 60_000)],
  ] as const) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < claims; i++) if (await claim()) throw new Error(`${label}: claimed a job not due`);
    console.log(`${label}, nothing due: ${(Number(process.hrtime.bigint() - t0) / 1000 / claims).toFixed(0)} µs a claim`);
  }

  await logged.destroy();
  await storage.close();
  rmSync(dir, { recursive: true, force: true });
  if (postgres) {
    const admin = new pg.Client({ connectionString: PG_ADMIN });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  }
}

class Rollback extends Error {}

await main();
