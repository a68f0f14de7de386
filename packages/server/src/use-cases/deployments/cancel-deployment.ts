import type { Actor } from '../../domain/auth/actor.js';
import { DomainError } from '../../domain/errors.js';
import { announceEvents } from '../../storage/event-log.js';
import type { UseCaseDeps } from '../deps.js';
import { type DeploymentRecord, deploymentRecord, loadDeployment } from './deployment-record.js';
import { cancelQueuedOperation } from './queued-operation.js';

/**
 * POST /api/v1/deployments/<uuid>/cancel. A queued deployment is cancelled at once (its job never
 * runs). A running one is asked to stop: the job runner sees the request within a poll, fires the
 * deploy steps' cancel signal (the running hook's process group is stopped), marks the steps that
 * did not run `aborted` and ends the operation `cancelled`; the live release keeps serving. A
 * finished deployment is 409 deployment_finished. `cancelled` says which of the two happened.
 */
export async function cancelDeployment(
  deps: UseCaseDeps,
  actor: Actor,
  uuid: string,
): Promise<{ record: DeploymentRecord; cancelled: 'now' | 'requested' }> {
  const outcome = await deps.writes(async (trx) => {
    const { d, op } = await loadDeployment(trx, actor, uuid);
    const now = deps.clock.now().toISOString();
    if (op.status === 'queued' && (await cancelQueuedOperation(trx, op.uuid, now))) {
      await trx.updateTable('deployments').set({ cancel_requested_at: now }).where('uuid', '=', d.uuid).execute();
      return 'now' as const;
    }
    const fresh = await trx.selectFrom('operations').select('status').where('uuid', '=', op.uuid).executeTakeFirstOrThrow();
    if (fresh.status !== 'queued' && fresh.status !== 'running')
      throw new DomainError('deployment_finished', `The deployment has finished (${fresh.status}); there is nothing to cancel.`);
    if (d.cancel_requested_at === null)
      await trx.updateTable('deployments').set({ cancel_requested_at: now }).where('uuid', '=', d.uuid).execute();
    return 'requested' as const;
  });
  // A queued deployment cancelled now never runs: its upload, if any, goes.
  if (outcome === 'now') await deps.artifacts.remove(uuid.toLowerCase());
  const { d, op } = await loadDeployment(deps.db, actor, uuid);
  if (outcome === 'now') announceEvents(deps.changes, d.team_uuid);
  deps.siteLists.invalidate(
    (await deps.db.selectFrom('sites').select('server_uuid').where('uuid', '=', d.site_uuid).executeTakeFirstOrThrow())
      .server_uuid,
  );
  return { record: deploymentRecord(d, op), cancelled: outcome };
}
