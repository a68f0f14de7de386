import { randomUUID } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { CreateOutgoingWebhookBody } from '@siteplane/contract';
import type { Actor } from '../../domain/auth/actor.js';
import { notFound } from '../../domain/errors.js';
import { UUID_RE, ValidationError } from '../../domain/field-errors.js';
import { EgressError } from '../../egress/egress-error.js';
import { keyset } from '../../storage/paging.js';
import type { Database } from '../../storage/schema.js';
import type { UseCaseDeps } from '../deps.js';
import { type PageRequest, toPage } from '../pagination.js';
import { teamFor } from '../team-of.js';
import { checkOutgoingWebhookBody } from './validate-outgoing-webhook.js';
import { newWebhookSecret } from './webhook-signature.js';

/** What the API shows of an endpoint: never its secret. */
export const outgoingWebhookRecord = (r: Database['outgoing_webhooks']) => ({
  uuid: r.uuid,
  team: r.team_uuid,
  url: r.url,
  events: JSON.parse(r.events) as string[],
  last_event: Math.max(Number(r.cursor_seq), Number(r.cursor_floor)),
  next_attempt_at: r.next_attempt_at,
  enabled: Number(r.enabled) === 1,
  previous_secret_expires_at: r.previous_secret_enc ? r.previous_secret_expires_at : null,
  created_at: r.created_at,
});

export const outgoingDeliveryRecord = (r: Database['outgoing_webhook_deliveries']) => ({
  uuid: r.uuid,
  event_seq: Number(r.event_seq),
  event_type: r.event_type,
  attempt: r.attempt,
  status_code: r.status_code,
  error: r.error,
  duration_ms: r.duration_ms,
  next_attempt_at: r.next_attempt_at,
  delivered_at: r.delivered_at,
  resend_of: r.resend_of,
  created_at: r.created_at,
});

/**
 * An endpoint's body rules (validate-outgoing-webhook.ts), then the URL's host through the egress
 * policy (a name is resolved now and again at every send: it may rebind).
 */
export async function checkEndpoint(deps: UseCaseDeps, body: { url: string; events: string[] }) {
  const checked = checkOutgoingWebhookBody(body);
  if (checked.url) {
    try {
      await deps.egress.resolve(checked.url.hostname);
    } catch (error) {
      // A name that does not resolve (yet) is accepted: its deliveries fail and are retried.
      if (!(error instanceof EgressError)) throw error;
      if (error.kind === 'target_not_allowed')
        checked.errors.push({ field: 'url', code: 'target_not_allowed', message: `${error.message}.` });
    }
  }
  return checked;
}

/**
 * POST /api/v1/webhooks: the body's rules, the URL's host through the egress policy (a name is
 * resolved now and again at every send: it may rebind), then the endpoint is stored with its
 * secret sealed. The secret is in this answer only. The endpoint receives the events recorded
 * after it was created: its cursor starts after the team's last event.
 */
export async function createOutgoingWebhook(deps: UseCaseDeps, actor: Actor, body: Static<typeof CreateOutgoingWebhookBody>) {
  const { url, events, errors } = await checkEndpoint(deps, body);
  const team = await teamFor(deps, actor, body.team).catch((error: unknown) => {
    if (!(error instanceof ValidationError)) throw error;
    errors.push(...error.errors);
    return null;
  });
  if (errors.length > 0 || team === null || url === null) throw new ValidationError(errors);

  const secret = newWebhookSecret();
  const last = await deps.db
    .selectFrom('events')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('team_uuid', '=', team)
    .executeTakeFirst();
  const row: Database['outgoing_webhooks'] = {
    uuid: randomUUID(),
    team_uuid: team,
    url: url.href,
    events: JSON.stringify(events),
    secret_enc: deps.secrets.seal(secret),
    cursor_xid: -1,
    cursor_seq: 0,
    cursor_floor: Number(last?.seq ?? 0),
    attempts: 0,
    next_attempt_at: null,
    lease_token: null,
    lease_until: null,
    created_at: deps.clock.now().toISOString(),
    enabled: 1,
    previous_secret_enc: null,
    previous_secret_expires_at: null,
  };
  await deps.db.insertInto('outgoing_webhooks').values(row).execute();
  return { ...outgoingWebhookRecord(row), secret };
}

export async function findOutgoingWebhook(deps: UseCaseDeps, actor: Actor, uuid: string) {
  if (!UUID_RE.test(uuid)) throw notFound('Webhook');
  const row = await deps.db
    .selectFrom('outgoing_webhooks')
    .selectAll()
    .where('uuid', '=', uuid.toLowerCase())
    .where('team_uuid', 'in', actor.teamUuids)
    .executeTakeFirst();
  if (!row) throw notFound('Webhook');
  return row;
}

export async function listOutgoingWebhooks(deps: UseCaseDeps, actor: Actor, page: PageRequest) {
  const rows = await keyset(
    deps.db.selectFrom('outgoing_webhooks').selectAll().where('team_uuid', 'in', actor.teamUuids),
    'outgoing_webhooks',
    page,
  ).execute();
  return toPage(rows, page, outgoingWebhookRecord);
}

/** The endpoint and its delivery log go; a delivery under way finishes but records nothing. */
export async function deleteOutgoingWebhook(deps: UseCaseDeps, actor: Actor, uuid: string) {
  const row = await findOutgoingWebhook(deps, actor, uuid);
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('outgoing_webhook_deliveries').where('webhook_uuid', '=', row.uuid).execute();
    await trx.deleteFrom('outgoing_webhooks').where('uuid', '=', row.uuid).execute();
  });
}

/** GET /api/v1/webhooks/<uuid>/deliveries: every attempt, oldest first, cursor-paged. */
export async function listOutgoingDeliveries(deps: UseCaseDeps, actor: Actor, uuid: string, page: PageRequest) {
  const hook = await findOutgoingWebhook(deps, actor, uuid);
  const rows = await keyset(
    deps.db.selectFrom('outgoing_webhook_deliveries').selectAll().where('webhook_uuid', '=', hook.uuid),
    'outgoing_webhook_deliveries',
    page,
  ).execute();
  return toPage(rows, page, outgoingDeliveryRecord);
}
