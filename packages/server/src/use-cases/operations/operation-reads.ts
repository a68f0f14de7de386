import type { Actor } from '../../domain/auth/actor.js';
import type { UseCaseDeps } from '../deps.js';

/**
 * The reads an operation's answer and its event stream share: the operation as its caller's teams
 * may see it (undefined for another tenant's, which the callers answer 404 like any unknown
 * record), its steps in order and its log lines after a sequence number.
 */
export function visibleOperation(deps: UseCaseDeps, actor: Actor, uuid: string) {
  return deps.db
    .selectFrom('operations')
    .selectAll()
    .where('uuid', '=', uuid)
    .where('team_uuid', 'in', actor.teamUuids)
    .executeTakeFirst();
}

export interface StepState {
  index: number;
  name: string;
  status: string;
  exit_code: number | null;
  started_at: string;
  finished_at: string | null;
}

export async function operationSteps(deps: UseCaseDeps, uuid: string): Promise<StepState[]> {
  const rows = await deps.db
    .selectFrom('operation_steps')
    .selectAll()
    .where('operation_uuid', '=', uuid)
    .orderBy('idx')
    .execute();
  return rows.map((s) => ({
    index: s.idx,
    name: s.name,
    status: s.status,
    exit_code: s.exit_code,
    started_at: s.started_at,
    finished_at: s.finished_at,
  }));
}

export function operationLogsAfter(deps: UseCaseDeps, uuid: string, afterSeq: number, limit: number) {
  return deps.db
    .selectFrom('operation_logs')
    .select(['seq', 'at', 'line'])
    .where('operation_uuid', '=', uuid)
    .where('seq', '>', afterSeq)
    .orderBy('seq')
    .limit(limit)
    .execute();
}
