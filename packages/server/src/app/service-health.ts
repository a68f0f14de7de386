import { type Kysely, sql } from 'kysely';
import type { Worker } from '../jobs/worker.js';
import type { Database } from '../storage/schema.js';
import type { AcmeOrderLog } from './acme-order-log.js';
import type { Clock } from './clock.js';

/** How long the worker may go without coming round, or leave a job it could claim waiting, before it counts as stalled. */
export const WORKER_STALLED_AFTER_MS = 5 * 60_000;

export interface HealthParts {
  database: 'ok' | 'down';
  /** `off`: this process runs no worker (SITEPLANE_WORKER=off); another process does the work. */
  worker: 'ok' | 'off' | 'stalled';
  acme: 'ok' | 'degraded';
}

/** GET /api/v1/health: the booleans clients read since the first round, and which part is degraded. */
export interface Health {
  database: boolean;
  worker: boolean;
  parts: HealthParts;
}

export interface HealthDeps {
  db: Kysely<Database>;
  clock: Clock;
  worker: Worker | null;
  acme: AcmeOrderLog;
}

export function serviceHealth(deps: HealthDeps): () => Promise<Health> {
  return async () => {
    const database = await sql`SELECT 1`.execute(deps.db).then(
      () => true,
      () => false,
    );
    const parts: HealthParts = {
      database: database ? 'ok' : 'down',
      worker: deps.worker === null ? 'off' : database && (await workerStalled(deps, deps.worker)) ? 'stalled' : 'ok',
      acme: deps.acme.degraded ? 'degraded' : 'ok',
    };
    return { database, worker: deps.worker !== null, parts };
  };
}

/**
 * Stalled: the claim loop has not come round for WORKER_STALLED_AFTER_MS (it polls every second), or
 * it has a free slot while a job it could claim has waited that long — a queued job whose time has
 * come and that is its site's oldest unfinished one, or a running job whose lease ran out that long
 * ago (its worker died and nothing took it over). A worker busy with long jobs is not stalled.
 */
async function workerStalled(deps: HealthDeps, worker: Worker): Promise<boolean> {
  const now = deps.clock.now().getTime();
  const state = worker.state();
  if (now - state.lastPassAt > WORKER_STALLED_AFTER_MS) return true;
  if (state.freeSlots === 0) return false;
  const cutoff = new Date(now - WORKER_STALLED_AFTER_MS).toISOString();
  const waiting = await sql<{ one: number }>`
    SELECT 1 AS one FROM jobs j
    WHERE ((j.status = 'queued' AND j.run_at <= ${cutoff}) OR (j.status = 'running' AND j.lease_until <= ${cutoff}))
      AND NOT EXISTS (
        SELECT 1 FROM jobs o
        WHERE o.site_uuid = j.site_uuid AND o.status IN ('queued', 'running')
          AND (o.created_at < j.created_at OR (o.created_at = j.created_at AND o.uuid < j.uuid))
      )
    LIMIT 1`.execute(deps.db);
  return waiting.rows.length > 0;
}
