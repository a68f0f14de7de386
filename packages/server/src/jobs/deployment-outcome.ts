import type { Kysely } from 'kysely';
import type { SecretBox } from '../crypto/secret-box.js';
import type { Database } from '../storage/schema.js';
import { openEnvironment } from '../use-cases/deployments/environment.js';

/**
 * What a successful deploy or rollback changes besides its operation (in the transaction that
 * records the operation's success): a deploy clears the site's deploy_needed when the environment
 * it ran with is still the current one (a change made while it ran keeps the flag); a rollback
 * marks the release it left as bad, so the default rollback target never picks it again.
 */
export async function deploymentSucceeded(
  trx: Kysely<Database>,
  secrets: SecretBox,
  op: Database['operations'],
  site: Database['sites'],
  now: string,
): Promise<void> {
  const params = JSON.parse(op.params) as { deployment?: string };
  const deployment = await trx
    .selectFrom('deployments')
    .selectAll()
    .where('uuid', '=', params.deployment ?? '')
    .executeTakeFirst();
  if (!deployment) return;
  if (op.kind === 'deploy') {
    const current = await openEnvironment(trx, secrets, site.uuid);
    if (deployment.environment_hash === current.hash)
      await trx.updateTable('sites').set({ deploy_needed: 0, updated_at: now }).where('uuid', '=', site.uuid).execute();
    return;
  }
  if (deployment.from_release && deployment.from_release !== deployment.release)
    await trx
      .updateTable('deployments')
      .set({ release_bad: 1 })
      .where('site_uuid', '=', site.uuid)
      .where('release', '=', deployment.from_release)
      .execute();
}

/**
 * A cancelled deployment's steps: the one that was running and every later one are `aborted`
 * (the later ones get their rows only now, so the operation lists every step it would have run).
 */
export async function markStepsAborted(
  trx: Kysely<Database>,
  operationUuid: string,
  names: string[],
  fromIdx: number,
  now: string,
): Promise<void> {
  for (let idx = Math.max(0, fromIdx); idx < names.length; idx++) {
    await trx
      .insertInto('operation_steps')
      .values({
        operation_uuid: operationUuid,
        idx,
        name: names[idx] ?? '',
        status: 'aborted',
        exit_code: null,
        started_at: now,
        finished_at: now,
      })
      .onConflict((oc) => oc.columns(['operation_uuid', 'idx']).doUpdateSet({ status: 'aborted', finished_at: now }))
      .execute();
  }
}
