import { type ExpressionBuilder, type Kysely, sql, type Updateable } from 'kysely';
import type { Dialect } from '../storage/database.js';
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
    const lock = this.dialect === 'postgres' ? sql`FOR UPDATE SKIP LOCKED` : sql``;
    const result = await sql<JobRow>`
      UPDATE jobs SET status = 'running', lease_until = ${lease}, locked_by = ${workerId}, attempts = attempts + 1
      WHERE uuid = (
        SELECT j.uuid FROM jobs j
        WHERE ((j.status = 'queued' AND j.run_at <= ${nowIso}) OR (j.status = 'running' AND j.lease_until < ${nowIso}))
          AND NOT EXISTS (
            SELECT 1 FROM jobs o
            WHERE o.site_uuid = j.site_uuid AND o.status IN ('queued', 'running')
              AND (o.created_at < j.created_at OR (o.created_at = j.created_at AND o.uuid < j.uuid))
          )
        ORDER BY j.run_at, j.created_at
        LIMIT 1
        ${lock}
      )
      RETURNING *`.execute(this.db);
    return result.rows[0] ?? null;
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
export type JobClaim = Pick<JobRow, 'uuid' | 'locked_by' | 'attempts'>;

/**
 * Whether this claim still holds the job, read before each step: the heartbeat notices a lost
 * lease only on its next beat, and a worker waking from a stall may reach the next step first.
 */
export async function stillHolds(db: Kysely<Database>, claim: JobClaim): Promise<boolean> {
  if (claim.locked_by === null) return false;
  const row = await db.selectFrom('jobs').select('uuid').where(heldBy(claim, claim.locked_by)).executeTakeFirst();
  return row !== undefined;
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
  if (claim.locked_by === null) return false;
  const r = await db.updateTable('jobs').set(change).where(heldBy(claim, claim.locked_by)).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Exponential backoff with a cap: 5 s, 10 s, 20 s … at most 5 minutes. */
export function backoffMs(attempt: number): number {
  return Math.min(5_000 * 2 ** Math.max(0, attempt - 1), 300_000);
}
