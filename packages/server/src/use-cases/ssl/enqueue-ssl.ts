/**
 * Queues a certificate operation (`ssl`) for a site in the caller's transaction, unless one is
 * already queued or running: a retry, the scheduler and a finished create never stack up two.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../storage/schema.js';
import { enqueueOperation } from '../operations/enqueue-operation.js';
import type { SslReason } from './obtain-certificate.js';

type OperationRow = Database['operations'];

export async function enqueueSsl(
  trx: Kysely<Database>,
  site: { uuid: string; team_uuid: string },
  reason: SslReason,
  now: string,
): Promise<{ operation: OperationRow; created: boolean }> {
  const open = await openSslOperation(trx, site.uuid);
  if (open) return { operation: open, created: false };
  const operation = await enqueueOperation(trx, { site, kind: 'ssl', params: { reason }, now });
  return { operation, created: true };
}

/** The site's ssl operation that is queued or running, if there is one. */
export function openSslOperation(trx: Kysely<Database>, siteUuid: string): Promise<OperationRow | undefined> {
  return trx
    .selectFrom('operations')
    .selectAll()
    .where('site_uuid', '=', siteUuid)
    .where('kind', '=', 'ssl')
    .where('status', 'in', ['queued', 'running'])
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
}
