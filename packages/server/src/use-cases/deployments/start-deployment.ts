import type { Actor } from '../../domain/auth/actor.js';
import { releaseName } from '../../domain/deployments/release-name.js';
import { DomainError } from '../../domain/errors.js';
import { announceEvents } from '../../storage/event-log.js';
import { insertRow } from '../../storage/insert-row.js';
import type { Database } from '../../storage/schema.js';
import { timeOrderedUuid } from '../../storage/time-ordered-uuid.js';
import type { UseCaseDeps } from '../deps.js';
import { enqueueOperation } from '../operations/enqueue-operation.js';
import { deployableSite } from './deploy-site.js';
import { type DeploymentRecord, deploymentRecord, liveRelease } from './deployment-record.js';
import { cancelQueuedOperation } from './queued-operation.js';

export type DeploymentTrigger = 'manual' | 'webhook';

export interface StartDeploymentRequest {
  /** The site's uuid. */
  site: string;
  /**
   * Whose request it is: the site must be one of the actor's teams' (else not found). null only for
   * callers that authenticated the site themselves (a push webhook verified with the site's secret).
   */
  actor: Actor | null;
  trigger: DeploymentTrigger;
  /** Default: the source's branch. */
  branch?: string;
  /** A commit sha to deploy; default: the branch's head when the deploy fetches. */
  commit?: string;
}

/**
 * Starts a deployment of a site from its source: the use case behind POST
 * /api/v1/sites/<uuid>/deployments and push webhooks. In one transaction: the site (locked), its
 * source, the live release, and an operation of kind `deploy` with its job and the deployment row.
 *
 * One deployment runs per site at a time (the queue runs a site's jobs one by one, in order).
 * Requests that arrive while deploys are queued collapse into the newest: each queued (not yet
 * running) deploy of the site is cancelled and names the new one in `superseded_by`; a running one
 * is left to finish. So a burst of pushes runs at most the running deploy and the newest commit.
 */
export async function startDeployment(deps: UseCaseDeps, request: StartDeploymentRequest): Promise<DeploymentRecord> {
  const result = await deps.writes(async (trx) => {
    const { site } = await deployableSite(trx, { actor: request.actor, dialect: deps.dialect, lock: true }, request.site);
    if (site.status !== 'installed')
      throw new DomainError('conflict', `The site is ${site.status}; it can be deployed once it is installed.`);
    const source = await trx.selectFrom('site_sources').select('branch').where('site_uuid', '=', site.uuid).executeTakeFirst();
    if (!source) throw new DomainError('source_missing', 'The site has no source: bind it to a repository first (PUT …/source).');
    const now = deps.clock.now();
    const nowIso = now.toISOString();
    const uuid = timeOrderedUuid();
    const queued = await trx
      .selectFrom('deployments')
      .innerJoin('operations', 'operations.uuid', 'deployments.operation_uuid')
      .select(['deployments.uuid', 'deployments.operation_uuid'])
      .where('deployments.site_uuid', '=', site.uuid)
      .where('deployments.kind', '=', 'deploy')
      .where('operations.status', '=', 'queued')
      .execute();
    for (const q of queued)
      if (await cancelQueuedOperation(trx, q.operation_uuid, nowIso))
        await trx.updateTable('deployments').set({ superseded_by: uuid }).where('uuid', '=', q.uuid).execute();
    const operation = await enqueueOperation(trx, { site, kind: 'deploy', params: { deployment: uuid }, now: nowIso });
    const row: Database['deployments'] = {
      uuid,
      site_uuid: site.uuid,
      team_uuid: site.team_uuid,
      operation_uuid: operation.uuid,
      kind: 'deploy',
      trigger: request.trigger,
      branch: request.branch ?? source.branch,
      requested_commit: request.commit?.toLowerCase() ?? null,
      commit_sha: null,
      commit_message: null,
      commit_author: null,
      release: releaseName(now, uuid),
      from_release: await liveRelease(trx, site.uuid),
      environment_hash: null,
      ran_migrations: 0,
      rollback_info: null,
      release_bad: 0,
      superseded_by: null,
      cancel_requested_at: null,
      created_at: nowIso,
    };
    await insertRow(trx, 'deployments', row);
    return {
      record: deploymentRecord(row, operation),
      server: site.server_uuid,
      team: site.team_uuid,
      superseded: queued.length > 0,
    };
  });
  deps.siteLists.invalidate(result.server);
  if (result.superseded) announceEvents(deps.changes, result.team);
  deps.jobEnqueued();
  return result.record;
}
