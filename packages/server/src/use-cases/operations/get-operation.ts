import type { Actor } from '../../domain/auth/actor.js';
import { notFound } from '../../domain/errors.js';
import type { UseCaseDeps } from '../deps.js';

/** GET /api/v1/operations/<uuid>: steps and log lines after `after` (ARCHITECTURE §2 Async work). */
export async function getOperation(deps: UseCaseDeps, actor: Actor, uuid: string, after: number, limit: number) {
  const op = await deps.db
    .selectFrom('operations')
    .selectAll()
    .where('uuid', '=', uuid)
    .where('team_uuid', 'in', actor.teamUuids)
    .executeTakeFirst();
  if (!op) throw notFound('Operation');
  const [steps, logs] = await Promise.all([
    deps.db.selectFrom('operation_steps').selectAll().where('operation_uuid', '=', uuid).orderBy('idx').execute(),
    deps.db
      .selectFrom('operation_logs')
      .select(['seq', 'at', 'line'])
      .where('operation_uuid', '=', uuid)
      .where('seq', '>', after)
      .orderBy('seq')
      .limit(limit + 1)
      .execute(),
  ]);
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
    steps: steps.map((s) => ({
      index: s.idx,
      name: s.name,
      status: s.status,
      exit_code: s.exit_code,
      started_at: s.started_at,
      finished_at: s.finished_at,
    })),
    logs: logs.slice(0, limit),
    next_after: more ? (logs[limit - 1]?.seq ?? null) : null,
  };
}
