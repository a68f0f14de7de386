import type { Static } from '@sinclair/typebox';
import type { RotateOutgoingWebhookSecretBody, UpdateOutgoingWebhookBody } from '@siteplane/contract';
import type { Actor } from '../../domain/auth/actor.js';
import { ValidationError } from '../../domain/field-errors.js';
import { announceEvents } from '../../storage/event-log.js';
import type { Database } from '../../storage/schema.js';
import type { UseCaseDeps } from '../deps.js';
import { checkEndpoint, findOutgoingWebhook, outgoingWebhookRecord } from './manage-outgoing-webhooks.js';
import { newWebhookSecret } from './webhook-signature.js';

const DEFAULT_GRACE_SECONDS = 86_400;

/**
 * PATCH /api/v1/webhooks/<uuid>: a new `url` or `events` (the rules and egress check of a create),
 * or `enabled`. Pausing keeps the endpoint's place in the change log: nothing is skipped, the events
 * recorded meanwhile are delivered in order on resume (while the log keeps them,
 * SITEPLANE_EVENT_RETENTION_DAYS), a pending retry included. Resuming wakes the dispatcher.
 */
export async function updateOutgoingWebhook(
  deps: UseCaseDeps,
  actor: Actor,
  uuid: string,
  body: Static<typeof UpdateOutgoingWebhookBody>,
) {
  const row = await findOutgoingWebhook(deps, actor, uuid);
  const changes: Partial<Database['outgoing_webhooks']> = {};
  if (body.url !== undefined || body.events !== undefined) {
    const { url, events, errors } = await checkEndpoint(deps, {
      url: body.url ?? row.url,
      events: body.events ?? (JSON.parse(row.events) as string[]),
    });
    if (errors.length > 0 || url === null) throw new ValidationError(errors);
    changes.url = url.href;
    changes.events = JSON.stringify(events);
  }
  if (body.enabled !== undefined) changes.enabled = body.enabled ? 1 : 0;
  await deps.db.updateTable('outgoing_webhooks').set(changes).where('uuid', '=', row.uuid).execute();
  if (body.enabled) announceEvents(deps.changes, row.team_uuid);
  return outgoingWebhookRecord({ ...row, ...changes });
}

/**
 * POST /api/v1/webhooks/<uuid>/rotate-secret: a new secret, in this answer only. For
 * `graceSeconds` (default a day) the current secret goes on signing beside it — each delivery
 * carries both signatures, as Standard Webhooks allows — so a receiver can switch to the new one
 * without a delivery failing its check. A rotation within the grace period drops the oldest.
 */
export async function rotateOutgoingWebhookSecret(
  deps: UseCaseDeps,
  actor: Actor,
  uuid: string,
  body: Static<typeof RotateOutgoingWebhookSecretBody> | undefined,
) {
  const row = await findOutgoingWebhook(deps, actor, uuid);
  const grace = body?.graceSeconds ?? DEFAULT_GRACE_SECONDS;
  const secret = newWebhookSecret();
  const changes = {
    secret_enc: deps.secrets.seal(secret),
    previous_secret_enc: grace > 0 ? row.secret_enc : null,
    previous_secret_expires_at: grace > 0 ? new Date(deps.clock.now().getTime() + grace * 1000).toISOString() : null,
  };
  // Only if no other rotation came in between: the secret being replaced is the one read.
  const updated = await deps.db
    .updateTable('outgoing_webhooks')
    .set(changes)
    .where('uuid', '=', row.uuid)
    .where('secret_enc', '=', row.secret_enc)
    .executeTakeFirst();
  if (Number(updated.numUpdatedRows) !== 1) return rotateOutgoingWebhookSecret(deps, actor, uuid, body);
  return { ...outgoingWebhookRecord({ ...row, ...changes }), secret };
}
