import { type Kysely, sql } from 'kysely';
import type { Dialect } from '../storage/database.js';
import type { Database } from '../storage/schema.js';

export type JobRow = Database['jobs'];

/**
 * The durable queue lives in the service's own database (ARCHITECTURE §1 jobs/): claimed with a
 * lease that a heartbeat extends, so a crashed worker's job is claimed again once its lease runs out.
 * Only the oldest unfinished job of a site can be claimed: one job at a time per site, in order.
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

  /** Extends the lease; false when the job was taken by another worker (our lease had run out). */
  async heartbeat(uuid: string, workerId: string, now: Date, leaseMs: number): Promise<boolean> {
    const r = await this.db
      .updateTable('jobs')
      .set({ lease_until: new Date(now.getTime() + leaseMs).toISOString() })
      .where('uuid', '=', uuid)
      .where('locked_by', '=', workerId)
      .where('status', '=', 'running')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async complete(uuid: string): Promise<void> {
    await this.db.updateTable('jobs').set({ status: 'done', lease_until: null }).where('uuid', '=', uuid).execute();
  }

  async fail(uuid: string, error: string): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ status: 'failed', lease_until: null, last_error: error })
      .where('uuid', '=', uuid)
      .execute();
  }

  /** Puts the job back for a later attempt (transient failure: connection lost, server busy). */
  async retryLater(uuid: string, error: string, runAt: Date): Promise<void> {
    await this.db
      .updateTable('jobs')
      .set({ status: 'queued', lease_until: null, locked_by: null, last_error: error, run_at: runAt.toISOString() })
      .where('uuid', '=', uuid)
      .execute();
  }
}

/** Exponential backoff with a cap: 5 s, 10 s, 20 s … at most 5 minutes. */
export function backoffMs(attempt: number): number {
  return Math.min(5_000 * 2 ** Math.max(0, attempt - 1), 300_000);
}
