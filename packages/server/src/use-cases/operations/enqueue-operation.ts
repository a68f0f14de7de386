import type { Kysely } from 'kysely';
import { insertRow } from '../../storage/insert-row.js';
import type { Database } from '../../storage/schema.js';
import { timeOrderedUuid } from '../../storage/time-ordered-uuid.js';

/**
 * Writes an operation and its job in the caller's transaction: the 202 is sent only after both are
 * committed together with the site row, so an acknowledged request is never lost.
 */
export async function enqueueOperation(
  trx: Kysely<Database>,
  input: {
    site: { uuid: string; team_uuid: string };
    kind: Database['operations']['kind'];
    params: Record<string, unknown>;
    now: string;
  },
) {
  const operation = {
    uuid: timeOrderedUuid(),
    site_uuid: input.site.uuid,
    team_uuid: input.site.team_uuid,
    kind: input.kind,
    status: 'queued' as const,
    params: JSON.stringify(input.params),
    error: null,
    created_at: input.now,
    started_at: null,
    finished_at: null,
  };
  await insertRow(trx, 'operations', operation);
  await insertRow(trx, 'jobs', {
    uuid: timeOrderedUuid(),
    operation_uuid: operation.uuid,
    site_uuid: input.site.uuid,
    kind: `site.${input.kind}`,
    status: 'queued',
    attempts: 0,
    max_attempts: 5,
    run_at: input.now,
    lease_until: null,
    locked_by: null,
    last_error: null,
    created_at: input.now,
    team_uuid: input.site.team_uuid,
  });
  return operation;
}
