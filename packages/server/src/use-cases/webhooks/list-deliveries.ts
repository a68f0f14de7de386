import type { Actor } from '../../domain/auth/actor.js';
import { type DeliveryRow, WebhookDeliveries } from '../../storage/webhook-deliveries.js';
import type { UseCaseDeps } from '../deps.js';
import { type Page, type PageRequest, toPage } from '../pagination.js';
import { siteOfActor } from './site-of-actor.js';

/** GET /api/v1/sites/<uuid>/webhook/deliveries: the last 100 hooks received, oldest first, in the list envelope. */
export async function listDeliveries(
  deps: UseCaseDeps,
  actor: Actor,
  siteUuid: string,
  page: PageRequest,
): Promise<Page<unknown>> {
  const site = await siteOfActor(deps, actor, siteUuid);
  const rows = await new WebhookDeliveries(deps.db).list(site.uuid, page);
  return toPage(rows, page, deliveryRecord);
}

export function deliveryRecord(row: DeliveryRow) {
  return {
    uuid: row.uuid,
    provider: row.provider,
    delivery_id: row.delivery_id,
    event: row.event,
    outcome: row.outcome,
    reason: row.reason,
    detail: row.detail,
    branch: row.branch,
    commit: row.commit_sha,
    deployment: row.deployment_uuid,
    created_at: row.created_at,
  };
}
