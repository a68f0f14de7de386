import type { Actor } from '../../domain/auth/actor.js';
import { DomainError } from '../../domain/errors.js';
import { ValidationError } from '../../domain/field-errors.js';
import { insertRow } from '../../storage/insert-row.js';
import type { Database } from '../../storage/schema.js';
import { timeOrderedUuid } from '../../storage/time-ordered-uuid.js';
import type { UseCaseDeps } from '../deps.js';
import { enqueueOperation } from '../operations/enqueue-operation.js';
import { loadDeploySettings } from './deploy-settings.js';
import { deployableSite } from './deploy-site.js';
import { type DeploymentRecord, deploymentRecord, liveRelease, newDeploymentRow } from './deployment-record.js';
import { currentEnvironmentHash } from './environment.js';

/**
 * POST /api/v1/sites/<uuid>/rollback `{release?}`: re-points the site to a kept release without
 * rebuilding (an operation of kind `rollback`, a deployment with trigger `rollback`). Kept releases
 * are those of the site's last keepReleases successful deploys (what the deploy's prune step
 * leaves). Default target: the newest kept release older than the live one that no rollback left
 * (`release_bad`). The answer says whether the environment differs from the one the target was
 * deployed with, and whether a migrations hook ran in a deploy after it (the database may be ahead
 * of that code). On success the release it left is marked bad.
 */
export async function rollbackSite(
  deps: UseCaseDeps,
  actor: Actor,
  siteUuid: string,
  body: { release?: string },
): Promise<DeploymentRecord> {
  const envHash = await (async () => {
    const { site } = await deployableSite(deps.db, { actor }, siteUuid);
    return currentEnvironmentHash(deps.db, deps.secrets, site.uuid);
  })();
  const result = await deps.writes(async (trx) => {
    const { site, defaults } = await deployableSite(trx, { actor, dialect: deps.dialect, lock: true }, siteUuid);
    if (site.status !== 'installed')
      throw new DomainError('conflict', `The site is ${site.status}; it can be rolled back once it is installed.`);
    // The live release must stay what this rollback leaves until it runs: not while a deploy may change it.
    const pending = await trx
      .selectFrom('deployments')
      .innerJoin('operations', 'operations.uuid', 'deployments.operation_uuid')
      .select('deployments.uuid')
      .where('deployments.site_uuid', '=', site.uuid)
      .where('operations.status', 'in', ['queued', 'running'])
      .orderBy('deployments.created_at')
      .executeTakeFirst();
    if (pending)
      throw new DomainError(
        'conflict',
        `Deployment ${pending.uuid} is queued or running: wait for it or cancel it, then roll back.`,
      );
    const { settings } = await loadDeploySettings(trx, site, defaults);
    const deploys = await trx
      .selectFrom('deployments')
      .innerJoin('operations', 'operations.uuid', 'deployments.operation_uuid')
      .selectAll('deployments')
      .where('deployments.site_uuid', '=', site.uuid)
      .where('deployments.kind', '=', 'deploy')
      .where('operations.status', '=', 'succeeded')
      .orderBy('deployments.created_at', 'desc')
      .orderBy('deployments.uuid', 'desc')
      .execute();
    const kept = deploys.slice(0, settings.keepReleases);
    const live = await liveRelease(trx, site.uuid);
    let target: Database['deployments'] | undefined;
    if (body.release !== undefined) {
      target = kept.find((d) => d.release === body.release);
      if (!target)
        throw new ValidationError([
          { field: 'release', code: 'not_found', message: 'Not a release of a successful deploy this site still keeps.' },
        ]);
      if (target.release === live)
        throw new ValidationError([{ field: 'release', code: 'invalid_value', message: 'This release is the live one.' }]);
    } else {
      const liveAt = kept.find((d) => d.release === live)?.created_at ?? null;
      target = kept.find((d) => d.release !== live && d.release_bad === 0 && (liveAt === null || d.created_at < liveAt));
      if (!target) throw new DomainError('no_rollback_target', 'No earlier kept release to roll back to.');
    }
    const chosen = target;
    const migrationsChanged = deploys.some((d) => d.created_at > chosen.created_at && d.ran_migrations === 1);
    const now = deps.clock.now();
    const nowIso = now.toISOString();
    const uuid = timeOrderedUuid();
    const operation = await enqueueOperation(trx, { site, kind: 'rollback', params: { deployment: uuid }, now: nowIso });
    const row = newDeploymentRow({
      uuid,
      site_uuid: site.uuid,
      team_uuid: site.team_uuid,
      operation_uuid: operation.uuid,
      kind: 'rollback',
      trigger: 'rollback',
      branch: chosen.branch,
      requested_commit: chosen.commit_sha,
      commit_sha: chosen.commit_sha,
      commit_message: chosen.commit_message,
      commit_author: chosen.commit_author,
      release: chosen.release,
      from_release: live,
      environment_hash: chosen.environment_hash,
      rollback_info: JSON.stringify({
        environment_changed: chosen.environment_hash !== envHash,
        migrations_changed: migrationsChanged,
      }),
      created_at: nowIso,
      // The kept release is re-pointed to, whatever made it.
      source_kind: chosen.source_kind,
      artifact_sha256: chosen.artifact_sha256,
      artifact_bytes: chosen.artifact_bytes,
    });
    await insertRow(trx, 'deployments', row);
    return { record: deploymentRecord(row, operation), server: site.server_uuid };
  });
  deps.siteLists.invalidate(result.server);
  deps.jobEnqueued();
  return result.record;
}
