import type { Kysely } from 'kysely';
import type { Step } from '../../provisioning/step.js';
import type { Database } from '../../storage/schema.js';
import type { ProviderHooks } from './provider-hook.js';
import { registeredOf } from './webhook-config.js';

/**
 * A step of a site's deletion when its push webhook was registered at a provider: the hook is
 * deleted there, so the provider stops posting to a URL that now answers 404 (best effort: a
 * failure is logged in the operation and recorded in webhook_removals, and never fails the
 * deletion). No step for a site without such a hook.
 */
export function webhookCleanup(
  db: Kysely<Database>,
  hooks: Pick<ProviderHooks, 'remove'>,
): (site: Database['sites']) => Promise<Step[]> {
  const registered = async (siteUuid: string) => {
    const row = await db.selectFrom('site_webhooks').selectAll().where('site_uuid', '=', siteUuid).executeTakeFirst();
    const hook = row ? registeredOf(row) : null;
    return hook?.hook_id ? hook : null;
  };
  return async (site) => {
    if (!(await registered(site.uuid))) return [];
    return [
      {
        name: 'remove push webhook at provider',
        async run(ctx) {
          // Read again: a retried deletion must not try a hook already removed.
          const hook = await registered(site.uuid);
          if (!hook) return;
          const result = await hooks.remove(site.uuid, hook, 'site_deleted');
          await db.updateTable('site_webhooks').set({ registered: null }).where('site_uuid', '=', site.uuid).execute();
          const where = `${hook.provider} ${hook.repository}, hook ${hook.hook_id}`;
          if (result.outcome === 'removed') ctx.log(`push webhook removed at ${where}`);
          else if (result.outcome === 'already_gone') ctx.log(`push webhook at ${where} was already gone`);
          else ctx.log(`push webhook at ${where} could not be removed: ${result.detail ?? 'unknown'}`);
        },
      },
    ];
  };
}
