import type { Kysely } from 'kysely';
import { recordEvent } from '../../storage/event-log.js';
import type { Database } from '../../storage/schema.js';

/**
 * Takes a queued operation out of the queue: its job is marked done only while it is still queued
 * (a job a worker has just claimed is `running` and is left alone), and then the operation is
 * cancelled, with its `operation.finished` and `deployment.cancelled` events (the caller announces
 * them after its commit). False when the job was no longer queued: the caller treats the operation as running.
 */
export async function cancelQueuedOperation(trx: Kysely<Database>, operationUuid: string, now: string): Promise<boolean> {
  const taken = await trx
    .updateTable('jobs')
    .set({ status: 'done', lease_until: null, last_error: 'cancelled before it ran' })
    .where('operation_uuid', '=', operationUuid)
    .where('status', '=', 'queued')
    .executeTakeFirst();
  if (Number(taken.numUpdatedRows) !== 1) return false;
  const op = await trx
    .updateTable('operations')
    .set({ status: 'cancelled', finished_at: now })
    .where('uuid', '=', operationUuid)
    .where('status', '=', 'queued')
    .returning(['team_uuid', 'site_uuid', 'kind', 'params'])
    .executeTakeFirst();
  if (op) {
    const about = { site: op.site_uuid, operation: operationUuid };
    await recordEvent(trx, {
      team: op.team_uuid,
      type: 'operation.finished',
      subject: operationUuid,
      data: { ...about, kind: op.kind, status: 'cancelled' },
      now,
    });
    const deployment = (JSON.parse(op.params) as { deployment?: string }).deployment;
    if (deployment)
      await recordEvent(trx, {
        team: op.team_uuid,
        type: 'deployment.cancelled',
        subject: deployment,
        data: { ...about, deployment, kind: op.kind, before_it_ran: true },
        now,
      });
  }
  return true;
}
