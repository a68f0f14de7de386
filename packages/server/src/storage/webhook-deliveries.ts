import type { Kysely } from 'kysely';
import type { PageRequest } from '../use-cases/pagination.js';
import { keyset } from './paging.js';
import type { Database } from './schema.js';
import { timeOrderedUuid } from './time-ordered-uuid.js';

/** Deliveries kept per site; older ones are dropped as new ones arrive. */
export const DELIVERIES_KEPT = 100;
/** How long a delivery id that started a deployment is remembered. */
export const DELIVERY_ID_TTL_MS = 24 * 60 * 60 * 1000;

export type DeliveryRow = Database['webhook_deliveries'];
export type NewDelivery = Omit<DeliveryRow, 'uuid' | 'created_at'>;

/**
 * The per-site record of hooks received and the delivery ids already used: what the deliveries
 * endpoint lists, and what stops a redelivery from deploying twice.
 */
export class WebhookDeliveries {
  constructor(private readonly db: Kysely<Database>) {}

  /** Writes one delivery and drops what falls beyond the last DELIVERIES_KEPT of its site. */
  async record(delivery: NewDelivery, now: Date): Promise<string> {
    const uuid = timeOrderedUuid(now.getTime());
    await this.db
      .insertInto('webhook_deliveries')
      .values({ ...delivery, uuid, created_at: now.toISOString() })
      .execute();
    const kept = this.db
      .selectFrom('webhook_deliveries')
      .select('uuid')
      .where('site_uuid', '=', delivery.site_uuid)
      .orderBy('created_at', 'desc')
      .orderBy('uuid', 'desc')
      .limit(DELIVERIES_KEPT);
    await this.db
      .deleteFrom('webhook_deliveries')
      .where('site_uuid', '=', delivery.site_uuid)
      .where('uuid', 'not in', kept)
      .execute();
    return uuid;
  }

  list(siteUuid: string, page: PageRequest): Promise<DeliveryRow[]> {
    return keyset(
      this.db.selectFrom('webhook_deliveries').selectAll().where('site_uuid', '=', siteUuid),
      'webhook_deliveries',
      page,
    ).execute();
  }

  /**
   * Claims a delivery id for a deployment: true when no delivery with this id started one in the
   * last day. The primary key decides between two copies arriving at once, on both databases.
   */
  async claim(siteUuid: string, provider: string, deliveryId: string, now: Date): Promise<boolean> {
    const expired = new Date(now.getTime() - DELIVERY_ID_TTL_MS).toISOString();
    await this.db.deleteFrom('webhook_delivery_ids').where('created_at', '<', expired).execute();
    const result = await this.db
      .insertInto('webhook_delivery_ids')
      .values({ site_uuid: siteUuid, provider, delivery_id: deliveryId, created_at: now.toISOString() })
      .onConflict((oc) => oc.columns(['site_uuid', 'provider', 'delivery_id']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  }

  /** Gives a claim back when the deployment could not start, so the provider's retry may try again. */
  async release(siteUuid: string, provider: string, deliveryId: string): Promise<void> {
    await this.db
      .deleteFrom('webhook_delivery_ids')
      .where('site_uuid', '=', siteUuid)
      .where('provider', '=', provider)
      .where('delivery_id', '=', deliveryId)
      .execute();
  }
}
