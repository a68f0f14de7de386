import type { Actor } from '../../domain/auth/actor.js';
import { notFound } from '../../domain/errors.js';
import type { UseCaseDeps } from '../deps.js';
import { operationLogsAfter, operationSteps, visibleOperation } from './operation-reads.js';

/** GET /api/v1/operations/<uuid>: steps and log lines after `after` (ARCHITECTURE §2 Async work). */
export async function getOperation(deps: UseCaseDeps, actor: Actor, uuid: string, after: number, limit: number) {
  const op = await visibleOperation(deps, actor, uuid);
  if (!op) throw notFound('Operation');
  const [steps, logs] = await Promise.all([operationSteps(deps, uuid), operationLogsAfter(deps, uuid, after, limit + 1)]);
  const more = logs.length > limit;
  return {
    uuid: op.uuid,
    site: op.site_uuid,
    kind: op.kind,
    status: op.status,
    error: op.error ? JSON.parse(op.error) : null,
    created_at: op.created_at,
    started_at: op.started_at,
    finished_at: op.finished_at,
    steps,
    logs: logs.slice(0, limit),
    next_after: more ? (logs[limit - 1]?.seq ?? null) : null,
  };
}
