import type { Actor } from '../../domain/auth/actor.js';
import { DomainError, notFound } from '../../domain/errors.js';
import { UUID_RE } from '../../domain/field-errors.js';
import type { EgressPolicy } from '../../egress/egress-policy.js';
import { guardedFetch } from '../../egress/guarded-fetch.js';
import { readEvent } from '../../storage/event-reader.js';
import { timeOrderedUuid } from '../../storage/time-ordered-uuid.js';
import type { UseCaseDeps } from '../deps.js';
import { findOutgoingWebhook, outgoingDeliveryRecord } from './manage-outgoing-webhooks.js';
import { postEvent, WEBHOOK_MAX_ANSWER_BYTES } from './post-event.js';
import { signingSecrets } from './webhook-signature.js';

/** One guarded fetch per egress policy (its keep-alive agents reused), answers cut at 64 KiB. */
const fetches = new WeakMap<EgressPolicy, typeof fetch>();
const fetchFor = (egress: EgressPolicy) => {
  let made = fetches.get(egress);
  if (!made) {
    made = guardedFetch(egress, { maxBodyBytes: WEBHOOK_MAX_ANSWER_BYTES });
    fetches.set(egress, made);
  }
  return made;
};

/**
 * POST /api/v1/webhooks/<uuid>/deliveries/<delivery>/resend: the delivery's event sent again now,
 * by this process, once (no retries), with the same `webhook-id` and signed with the endpoint's
 * current secret(s); the attempt is written to the delivery log (`resend_of`) and answered. The
 * endpoint's place in the log and retry state are not touched; a paused endpoint can resend (it is
 * asked for by hand). 409 when the event is no longer in the change log.
 */
export async function resendOutgoingDelivery(deps: UseCaseDeps, actor: Actor, uuid: string, deliveryUuid: string) {
  const hook = await findOutgoingWebhook(deps, actor, uuid);
  if (!UUID_RE.test(deliveryUuid)) throw notFound('Delivery');
  const delivery = await deps.db
    .selectFrom('outgoing_webhook_deliveries')
    .selectAll()
    .where('uuid', '=', deliveryUuid.toLowerCase())
    .where('webhook_uuid', '=', hook.uuid)
    .executeTakeFirst();
  if (!delivery) throw notFound('Delivery');
  const event = await readEvent(deps.db, hook.team_uuid, Number(delivery.event_seq));
  if (!event)
    throw new DomainError(
      'conflict',
      `Event ${delivery.event_seq} is no longer in the change log (it keeps SITEPLANE_EVENT_RETENTION_DAYS days); it cannot be sent again.`,
    );
  const now = deps.clock.now();
  const outcome = await postEvent(
    fetchFor(deps.egress),
    hook.url,
    signingSecrets(hook, (sealed) => deps.secrets.open(sealed), now),
    event,
    now,
  );
  const at = deps.clock.now();
  const delivered = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
  const row = {
    uuid: timeOrderedUuid(at.getTime()),
    webhook_uuid: hook.uuid,
    event_seq: delivery.event_seq,
    event_type: delivery.event_type,
    attempt: 1,
    status_code: outcome.status,
    error: outcome.error,
    duration_ms: Math.round(outcome.ms),
    next_attempt_at: null,
    delivered_at: delivered ? at.toISOString() : null,
    created_at: at.toISOString(),
    resend_of: delivery.uuid,
  };
  await deps.db.insertInto('outgoing_webhook_deliveries').values(row).execute();
  return outgoingDeliveryRecord(row);
}
