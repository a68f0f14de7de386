import type { Actor } from '../../domain/auth/actor.js';
import { missingSettings } from '../../domain/deployments/deploy-settings.js';
import { releaseName } from '../../domain/deployments/release-name.js';
import { DomainError } from '../../domain/errors.js';
import { ValidationError } from '../../domain/field-errors.js';
import type { IncomingArtifact } from '../../storage/artifact-store.js';
import { announceEvents } from '../../storage/event-log.js';
import { insertRow } from '../../storage/insert-row.js';
import { timeOrderedUuid } from '../../storage/time-ordered-uuid.js';
import type { UseCaseDeps } from '../deps.js';
import { enqueueOperation } from '../operations/enqueue-operation.js';
import { loadDeploySettings } from './deploy-settings.js';
import { deployableSite } from './deploy-site.js';
import { type DeploymentRecord, deploymentRecord, liveRelease, newDeploymentRow } from './deployment-record.js';
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
  /**
   * An uploaded .tar.gz (POST …/deployments with a gzip body) to deploy instead of the source: the
   * site needs no bound repository; the file is named by the deployment inside the transaction.
   */
  artifact?: IncomingArtifact;
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
  let keptAs: string | null = null;
  const result = await deps
    .writes(async (trx) => {
      const { site, defaults } = await deployableSite(
        trx,
        { actor: request.actor, dialect: deps.dialect, lock: true },
        request.site,
      );
      if (site.status !== 'installed')
        throw new DomainError('conflict', `The site is ${site.status}; it can be deployed once it is installed.`);
      // A setting the deploy cannot go without (Generic Port's start command): refused now, not at its last step.
      const missing = missingSettings((await loadDeploySettings(trx, site, defaults)).settings, defaults);
      if (missing.length > 0) throw new ValidationError(missing);
      const { artifact } = request;
      const source = await trx.selectFrom('site_sources').select('branch').where('site_uuid', '=', site.uuid).executeTakeFirst();
      if (!source && !artifact)
        throw new DomainError(
          'source_missing',
          'The site has no source: bind it to a repository first (PUT …/source), or upload a .tar.gz to deploy.',
        );
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
      const superseded: string[] = [];
      for (const q of queued)
        if (await cancelQueuedOperation(trx, q.operation_uuid, nowIso)) {
          await trx.updateTable('deployments').set({ superseded_by: uuid }).where('uuid', '=', q.uuid).execute();
          superseded.push(q.uuid);
        }
      const operation = await enqueueOperation(trx, { site, kind: 'deploy', params: { deployment: uuid }, now: nowIso });
      const row = newDeploymentRow({
        uuid,
        site_uuid: site.uuid,
        team_uuid: site.team_uuid,
        operation_uuid: operation.uuid,
        kind: 'deploy',
        trigger: request.trigger,
        branch: artifact ? null : (request.branch ?? source?.branch ?? null),
        requested_commit: artifact ? null : (request.commit?.toLowerCase() ?? null),
        release: releaseName(now, uuid),
        from_release: await liveRelease(trx, site.uuid),
        created_at: nowIso,
        source_kind: artifact ? 'artifact' : 'git',
        artifact_sha256: artifact?.sha256 ?? null,
        artifact_bytes: artifact?.bytes ?? null,
      });
      await insertRow(trx, 'deployments', row);
      // Last, and flushed: a commit after this finds the archive; a rollback leaves a file that
      // ArtifactStore.sweep removes (no deployment names it).
      if (artifact) {
        await deps.artifacts.keep(artifact, uuid);
        keptAs = uuid;
      }
      return { record: deploymentRecord(row, operation), server: site.server_uuid, team: site.team_uuid, superseded };
    })
    .catch(async (error: unknown) => {
      // Not committed: no deployment names the file (the sweep would find it an hour later).
      if (keptAs) await deps.artifacts.remove(keptAs);
      throw error;
    });
  // Superseded deploys never run: their uploads are not needed.
  for (const old of result.superseded) await deps.artifacts.remove(old);
  deps.siteLists.invalidate(result.server);
  if (result.superseded.length > 0) announceEvents(deps.changes, result.team);
  deps.jobEnqueued();
  return result.record;
}
