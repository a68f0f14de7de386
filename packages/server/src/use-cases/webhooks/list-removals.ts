import type { Actor } from '../../domain/auth/actor.js';
import { keyset } from '../../storage/paging.js';
import type { UseCaseDeps } from '../deps.js';
import { type Page, type PageRequest, toPage } from '../pagination.js';
import { siteOfActor } from './site-of-actor.js';

/**
 * GET /api/v1/sites/<uuid>/webhook/removals: every deletion of the site's hook at its provider
 * attempted (webhook turned off, registered elsewhere), oldest first, in the list envelope; a
 * deleted site's own is in its deletion's operation log.
 */
export async function listWebhookRemovals(
  deps: UseCaseDeps,
  actor: Actor,
  siteUuid: string,
  page: PageRequest,
): Promise<Page<unknown>> {
  const site = await siteOfActor(deps, actor, siteUuid);
  const rows = await keyset(
    deps.db.selectFrom('webhook_removals').selectAll().where('site_uuid', '=', site.uuid),
    'webhook_removals',
    page,
  ).execute();
  return toPage(rows, page, (row) => ({
    uuid: row.uuid,
    provider: row.provider,
    repository: row.repository,
    provider_hook_id: row.provider_hook_id,
    cause: row.cause,
    outcome: row.outcome,
    detail: row.detail,
    created_at: row.created_at,
  }));
}
