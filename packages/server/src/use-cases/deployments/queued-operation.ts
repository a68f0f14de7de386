import type { Kysely } from 'kysely';
import type { Database } from '../../storage/schema.js';

/**
 * Takes a queued operation out of the queue: its job is marked done only while it is still queued
 * (a job a worker has just claimed is `running` and is left alone), and then the operation is
 * cancelled. False when the job was no longer queued: the caller treats the operation as running.
 */
export async function cancelQueuedOperation(trx: Kysely<Database>, operationUuid: string, now: string): Promise<boolean> {
  const taken = await trx
    .updateTable('jobs')
    .set({ status: 'done', lease_until: null, last_error: 'cancelled before it ran' })
    .where('operation_uuid', '=', operationUuid)
    .where('status', '=', 'queued')
    .executeTakeFirst();
  if (Number(taken.numUpdatedRows) !== 1) return false;
  await trx
    .updateTable('operations')
    .set({ status: 'cancelled', finished_at: now })
    .where('uuid', '=', operationUuid)
    .where('status', '=', 'queued')
    .execute();
  return true;
}
