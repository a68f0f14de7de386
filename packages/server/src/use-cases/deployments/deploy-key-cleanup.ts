import type { Step } from '../../provisioning/step.js';
import type { Database } from '../../storage/schema.js';
import { type RemovalDeps, removeRegisteredKey } from './provider-deploy-key.js';

/**
 * The last step of a site's deletion when its source has a deploy key registered at a hosted
 * provider: the key is removed there (best effort: a failure is logged in the operation and
 * recorded in deploy_key_removals, and never fails the deletion, whose server work is done).
 * No step for a site without such a key, so other deletions list only their own steps.
 */
export function deployKeyCleanup(deps: RemovalDeps): (site: Database['sites']) => Promise<Step[]> {
  return async (site) => {
    const source = await deps.db.selectFrom('site_sources').selectAll().where('site_uuid', '=', site.uuid).executeTakeFirst();
    if (!source?.deploy_key_provider_id) return [];
    return [
      {
        name: 'remove deploy key at provider',
        async run(ctx) {
          // Read again: a retried deletion must not try a key already removed.
          const current = await deps.db
            .selectFrom('site_sources')
            .selectAll()
            .where('site_uuid', '=', site.uuid)
            .executeTakeFirst();
          if (!current?.deploy_key_provider_id) return;
          const result = await removeRegisteredKey(deps, current, 'site_deleted');
          await deps.db
            .updateTable('site_sources')
            .set({ deploy_key_provider_id: null })
            .where('site_uuid', '=', site.uuid)
            .execute();
          const where = `${current.provider} ${current.repository}, key ${current.deploy_key_provider_id}`;
          if (result?.outcome === 'removed') ctx.log(`deploy key removed at ${where}`);
          else if (result?.outcome === 'already_gone') ctx.log(`deploy key at ${where} was already gone`);
          else ctx.log(`deploy key at ${where} could not be removed: ${result?.detail ?? 'unknown'}`);
        },
      },
    ];
  };
}
