import { type ExpressionBuilder, type Kysely, type RawBuilder, sql, type Updateable } from 'kysely';
import type { Dialect } from '../storage/database.js';
import { queryPerShape, selectPerShape } from '../storage/query-per-shape.js';
import type { Database } from '../storage/schema.js';

export type JobRow = Database['jobs'];

/**
 * The durable queue lives in the service's own database (ARCHITECTURE §1 jobs/): claimed with a
 * lease that a heartbeat extends, so a crashed worker's job is claimed again once its lease runs out.
 * Only the oldest unfinished job of a site can be claimed: one job at a time per site, in order.
 * Every claim counts as an attempt. A job whose leases ran out max_attempts times (a poison job: it
 * kills or stalls its worker) is claimed once more, only for its handler to record that it is given
 * up, in one fenced transaction with the job's `failed` (jobs/operation-outcome.ts recordGivenUp);
 * should that worker die too, the next claim does the same, and nothing runs the job again.
 */
export class JobQueue {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async claim(workerId: string, now: Date, leaseMs: number): Promise<JobRow | null> {
    const nowIso = now.toISOString();
    const lease = new Date(now.getTime() + leaseMs).toISOString();
    const set = sql`status = 'running', lease_until = ${lease}, locked_by = ${workerId}, attempts = attempts + 1`;
    // Most claims find nothing (every wake of an idle worker, every finished job of a drained
    // queue): two index probes answer that, where the fair pick below walks every team with work.
    if (!(await anyDue(this.db, nowIso))) return null;
    if (this.dialect === 'postgres') {
      // One statement: the job row is locked by the pick (SKIP LOCKED, so claimers never wait on
      // each other's jobs); only the team's turn row is waited on, for the length of one statement,
      // and nothing waits while holding it, so concurrent claims cannot deadlock.
      const result = await sql<JobRow>`
        WITH picked AS (${nextJob(nowIso, sql`FOR UPDATE SKIP LOCKED`, noIndexHint)}),
        claimed AS (UPDATE jobs SET ${set} FROM picked WHERE jobs.uuid = picked.uuid RETURNING jobs.*),
        served AS (${markServed(sql`SELECT team_uuid FROM claimed`)})
        SELECT * FROM claimed`.execute(this.db);
      return result.rows[0] ?? null;
    }
    // SQLite has one writer: the claim and the team's turn commit together in a short transaction.
    return this.db.transaction().execute(async (trx) => {
      const result = await sql<JobRow>`
        UPDATE jobs SET ${set} WHERE uuid = (SELECT uuid FROM (${nextJob(nowIso, sql``, sqliteIndexedBy)}))
        RETURNING *`.execute(trx);
      const job = result.rows[0];
      if (!job) return null;
      await sql`${markServed(sql`SELECT ${job.team_uuid} AS team_uuid`)}`.execute(trx);
      return job;
    });
  }

  /** Extends the lease; false when the claim was lost (its lease ran out and the job was claimed again). */
  async heartbeat(claim: JobClaim, now: Date, leaseMs: number): Promise<boolean> {
    return updateHeldJob(this.db, claim, { lease_until: new Date(now.getTime() + leaseMs).toISOString() });
  }

  /** Marks the job done; false (and nothing changed) when the claim was lost to another. */
  async complete(claim: JobClaim): Promise<boolean> {
    return updateHeldJob(this.db, claim, { status: 'done', lease_until: null });
  }

  /** Marks the job failed for good; false (and nothing changed) when the claim was lost to another. */
  async fail(claim: JobClaim, error: string): Promise<boolean> {
    return updateHeldJob(this.db, claim, { status: 'failed', lease_until: null, last_error: error });
  }

  /**
   * Puts the job back for a later attempt (transient failure: connection lost, server busy); false
   * (and nothing changed) when the claim was lost to another.
   */
  async retryLater(claim: JobClaim, error: string, runAt: Date): Promise<boolean> {
    return updateHeldJob(this.db, claim, {
      status: 'queued',
      lease_until: null,
      locked_by: null,
      last_error: error,
      run_at: runAt.toISOString(),
    });
  }
}

/**
 * What a worker holds after `claim`: the job, by whom, and which claim of it. `attempts` grows with
 * every claim, so it tells two claims of one worker apart too (a worker that stalled past its lease
 * and then claimed the same job again).
 */
/**
 * The job the next claim takes. Claimable: queued and due, or running with its lease run out; and
 * the oldest unfinished job of its site (one job at a time per site, in order). Each team with
 * unfinished jobs offers its first claimable one in run_at, created_at order; of those, the team
 * served longest ago goes first (never served: first of all), ties by the job's age. So teams with
 * work take turns, and within a team the order is what it always was.
 *
 * Read through index jobs_waiting (unfinished jobs by team, run_at, created_at): the teams with
 * unfinished jobs are found one index step each (a loose index scan; `waiting`), and each team's
 * first claimable job by reading that team's jobs in order until one qualifies; a team's running
 * jobs whose lease ran out through index jobs_running (migration 018). A claim so costs about one
 * index step per team with work, not one per queued job.
 *
 * On PostgreSQL each team's offer is locked with SKIP LOCKED, so a concurrent claim offers that
 * team's next job instead of waiting; the locks end with the claim's statement.
 */
function nextJob(nowIso: string, lock: RawBuilder<unknown>, indexed: IndexHint) {
  return sql`
    WITH RECURSIVE waiting(team_uuid) AS (
      SELECT (SELECT team_uuid FROM jobs ${indexed('jobs_waiting')} WHERE status IN ('queued', 'running') AND team_uuid IS NOT NULL ORDER BY team_uuid LIMIT 1)
      UNION ALL
      SELECT (
        SELECT n.team_uuid FROM jobs n ${indexed('jobs_waiting')}
        WHERE n.status IN ('queued', 'running') AND n.team_uuid > w.team_uuid
        ORDER BY n.team_uuid LIMIT 1
      ) FROM waiting w WHERE w.team_uuid IS NOT NULL
    ),
    offers AS MATERIALIZED (
      SELECT w.team_uuid, (
        SELECT uuid FROM (
          SELECT * FROM (${teamJobs(sql`j.status = 'queued' AND j.run_at <= ${nowIso}`, lock, indexed('jobs_waiting'), sql`ORDER BY j.run_at, j.created_at LIMIT 1`)}) due
          UNION ALL
          SELECT * FROM (${teamJobs(sql`j.status = 'running' AND j.lease_until < ${nowIso}`, lock, indexed('jobs_running'), sql``)}) expired
        ) candidates
        ORDER BY run_at, created_at
        LIMIT 1
      ) AS uuid
      FROM waiting w WHERE w.team_uuid IS NOT NULL
    )
    SELECT f.uuid, f.team_uuid FROM offers f
    LEFT JOIN team_claims t ON t.team_uuid = f.team_uuid
    WHERE f.uuid IS NOT NULL
    ORDER BY COALESCE(t.last_served, 0),
      (SELECT run_at FROM jobs WHERE uuid = f.uuid), (SELECT created_at FROM jobs WHERE uuid = f.uuid)
    LIMIT 1`;
}

/**
 * The team's (w.team_uuid) jobs that are the oldest unfinished job of their site and meet
 * `claimable`, `first` of them. Queued and expired jobs are read apart so each read stays short:
 * the due ones in run_at order up to now, only the first; the running ones whose lease ran out (few:
 * at most as many as workers ran) all, by lease, and the caller orders them. Those are not ordered
 * here on purpose: asked for the first in run_at order, PostgreSQL without statistics took index
 * jobs_waiting for its order and read every unfinished job of the team to find a running one. On
 * PostgreSQL the expired ones offered are all locked (SKIP LOCKED) for the claim's statement.
 */
function teamJobs(
  claimable: RawBuilder<unknown>,
  lock: RawBuilder<unknown>,
  index: RawBuilder<unknown>,
  first: RawBuilder<unknown>,
) {
  return sql`
    SELECT j.uuid, j.run_at, j.created_at FROM jobs j ${index}
    WHERE j.team_uuid = w.team_uuid AND j.status IN ('queued', 'running') AND ${claimable}
      AND NOT EXISTS (
        SELECT 1 FROM jobs o
        WHERE o.site_uuid = j.site_uuid AND o.status IN ('queued', 'running')
          AND (o.created_at < j.created_at OR (o.created_at = j.created_at AND o.uuid < j.uuid))
      )
    ${first}
    ${lock}`;
}

/** Names the index a read of jobs must take (SQLite), or nothing (PostgreSQL). */
type IndexHint = (index: 'jobs_waiting' | 'jobs_running') => RawBuilder<unknown>;

/**
 * SQLite plans without statistics (the service never runs ANALYZE), and so took index jobs_claim to
 * find the teams with work and jobs_waiting to find a team's running jobs: both read every unfinished
 * job and sorted them, so a claim cost grew with the queue (1.2 ms with 2,000 queued). The hint
 * holds the plan the comments above describe. PostgreSQL has no such hint; it keeps statistics, and
 * before it has them the partial index jobs_running is the one that matches the expired read.
 */
const sqliteIndexedBy: IndexHint = (index) => sql`INDEXED BY ${sql.raw(index)}`;
const noIndexHint: IndexHint = () => sql``;

/**
 * Records that the claim just served this team: its turn becomes the newest (one more than the
 * newest so far). Two concurrent claims on PostgreSQL may take the same number; a tie only means
 * those two teams are next ordered by their jobs' age.
 */
function markServed(team: RawBuilder<unknown>) {
  return sql`
    INSERT INTO team_claims (team_uuid, last_served)
    SELECT team_uuid, (SELECT COALESCE(MAX(last_served), 0) + 1 FROM team_claims) FROM (${team}) served_team WHERE true
    ON CONFLICT (team_uuid) DO UPDATE SET last_served = excluded.last_served`;
}

export type JobClaim = Pick<JobRow, 'uuid' | 'locked_by' | 'attempts'>;

/**
 * Whether some job could be claimed now: one queued and due, or one running whose lease ran out
 * (through index jobs_claim on status, run_at). Not whether it is its site's oldest unfinished job:
 * a yes may still claim nothing, a no never misses a claimable job.
 */
async function anyDue(db: Kysely<Database>, nowIso: string): Promise<boolean> {
  const result = await sql<{ due: number }>`
    SELECT 1 AS due
    WHERE EXISTS (SELECT 1 FROM jobs WHERE status = 'queued' AND run_at <= ${nowIso})
      OR EXISTS (SELECT 1 FROM jobs WHERE status = 'running' AND lease_until < ${nowIso})`.execute(db);
  return result.rows.length > 0;
}

/**
 * Whether this claim still holds the job, read before each step: the heartbeat notices a lost
 * lease only on its next beat, and a worker waking from a stall may reach the next step first.
 */
export async function stillHolds(db: Kysely<Database>, claim: JobClaim): Promise<boolean> {
  const worker = claim.locked_by;
  if (worker === null) return false;
  // Read before every step: compiled once (storage/query-per-shape.ts), the values in heldBy's order.
  const rows = await selectPerShape(db, 'stillHolds', heldByValues(claim, worker), () =>
    db.selectFrom('jobs').select('uuid').where(heldBy(claim, worker)),
  );
  return rows.length > 0;
}

/** heldBy's values, in the order its SQL takes them. */
function heldByValues(claim: JobClaim, worker: string): unknown[] {
  return [claim.uuid, worker, claim.attempts, 'running'];
}

/** The job as this claim left it: running, locked by the same worker, same attempt. */
function heldBy(claim: JobClaim, worker: string) {
  return (eb: ExpressionBuilder<Database, 'jobs'>) =>
    eb.and([
      eb('uuid', '=', claim.uuid),
      eb('locked_by', '=', worker),
      eb('attempts', '=', claim.attempts),
      eb('status', '=', 'running'),
    ]);
}

/**
 * Changes the job only while this claim still holds it: running, locked by the same worker, same
 * attempt. Otherwise the lease ran out and another claim owns the job; a stale worker must not touch
 * it (fencing). Runs on the caller's transaction when given one, so a job's outcome can commit
 * together with the work's (jobs/operation-outcome.ts).
 */
export async function updateHeldJob(
  db: Kysely<Database>,
  claim: JobClaim,
  change: Updateable<Database['jobs']>,
): Promise<boolean> {
  const worker = claim.locked_by;
  if (worker === null) return false;
  // Kysely leaves out columns set to undefined: the shape names the columns that are set.
  const set = Object.entries(change).filter(([, value]) => value !== undefined);
  const r = await queryPerShape(
    db,
    `updateHeldJob ${set.map(([column]) => column).join(',')}`,
    [...set.map(([, value]) => value), ...heldByValues(claim, worker)],
    () => db.updateTable('jobs').set(change).where(heldBy(claim, worker)),
  );
  return Number(r.numAffectedRows) === 1;
}

/** Exponential backoff with a cap: 5 s, 10 s, 20 s … at most 5 minutes. */
export function backoffMs(attempt: number): number {
  return Math.min(5_000 * 2 ** Math.max(0, attempt - 1), 300_000);
}
