import type { Kysely } from 'kysely';

/**
 * Managing an outgoing webhook (use-cases/outgoing-webhooks):
 * - `enabled`: 0 pauses the endpoint; its cursor stays where it is, so the events recorded
 *   meanwhile are delivered, in order, once it is enabled again (while the change log keeps them).
 * - `previous_secret_enc`/`previous_secret_expires_at`: after a secret rotation the old secret,
 *   sealed, still signs each delivery beside the new one until then (Standard Webhooks allows
 *   several signatures), so receivers can switch without losing a delivery.
 * - deliveries' `resend_of`: an attempt asked for by hand (POST …/deliveries/<uuid>/resend), the
 *   delivery it repeats.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .alterTable('outgoing_webhooks')
    .addColumn('enabled', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
  await db.schema.alterTable('outgoing_webhooks').addColumn('previous_secret_enc', 'text').execute();
  await db.schema.alterTable('outgoing_webhooks').addColumn('previous_secret_expires_at', 'text').execute();
  await db.schema.alterTable('outgoing_webhook_deliveries').addColumn('resend_of', 'text').execute();
}
