import type { Actor } from '../../domain/auth/actor.js';
import { notFound } from '../../domain/errors.js';
import { isPlainObject, UUID_RE, ValidationError } from '../../domain/field-errors.js';
import { announceEvents, recordEvent } from '../../storage/event-log.js';
import { lockLiveSite } from '../../storage/site-context.js';
import type { UseCaseDeps } from '../deps.js';
import { enqueueOperation } from '../operations/enqueue-operation.js';
import { latestOperations } from './latest-operations.js';
import { type SiteRecord, siteRecord } from './site-record.js';

/** Body of DELETE /api/v1/sites/<uuid> (spec §4.1): optional deleteDatabase. */
export function parseDeleteBody(body: unknown): { deleteDatabase: boolean } {
  if (body === undefined || body === null) return { deleteDatabase: false };
  if (!isPlainObject(body))
    throw new ValidationError([{ field: '', code: 'invalid_type', message: 'The body must be a JSON object.' }]);
  const errors = [];
  for (const key of Object.keys(body)) {
    if (key !== 'deleteDatabase')
      errors.push({ field: key, code: 'unknown_field' as const, message: `"${key}" is not accepted here.` });
  }
  if (body.deleteDatabase !== undefined && typeof body.deleteDatabase !== 'boolean') {
    errors.push({ field: 'deleteDatabase', code: 'invalid_type' as const, message: 'deleteDatabase must be a boolean.' });
  }
  if (errors.length) throw new ValidationError(errors);
  return { deleteDatabase: body.deleteDatabase === true };
}

/**
 * DELETE /api/v1/sites/<uuid>: accepted asynchronously (202). The record goes only after cleanup
 * succeeded; a delete of a site already being deleted answers with the running operation.
 */
export async function deleteSite(deps: UseCaseDeps, actor: Actor, uuid: string, body: unknown): Promise<SiteRecord> {
  const { deleteDatabase } = parseDeleteBody(body);
  if (!UUID_RE.test(uuid)) throw notFound('Site');
  const result = await deps.writes(async (trx) => {
    const site = await lockLiveSite(trx, deps.dialect, uuid, actor);
    if (!site) throw notFound('Site');
    const running = (await latestOperations(trx, [site.uuid])).get(site.uuid);
    if (
      site.status === 'deleting' &&
      running?.kind === 'delete' &&
      (running.status === 'queued' || running.status === 'running')
    ) {
      return { record: siteRecord(site, running), enqueued: false, team: site.team_uuid };
    }
    const now = deps.clock.now().toISOString();
    await trx.updateTable('sites').set({ status: 'deleting', updated_at: now }).where('uuid', '=', site.uuid).execute();
    const operation = await enqueueOperation(trx, { site, kind: 'delete', params: { deleteDatabase }, now });
    await recordEvent(trx, {
      team: site.team_uuid,
      type: 'site.deleting',
      subject: site.uuid,
      data: { site: site.uuid, server: site.server_uuid, domain: site.domain, operation: operation.uuid, deleteDatabase },
      now,
    });
    return {
      record: siteRecord({ ...site, status: 'deleting', updated_at: now }, operation),
      enqueued: true,
      team: site.team_uuid,
    };
  });
  deps.siteLists.invalidate(result.record.server);
  if (result.enqueued) {
    announceEvents(deps.changes, result.team);
    deps.jobEnqueued();
  }
  return result.record;
}
