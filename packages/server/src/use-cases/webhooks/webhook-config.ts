import type { Static } from '@sinclair/typebox';
import type { ConfigureWebhookBody } from '@siteplane/contract';
import type { Actor } from '../../domain/auth/actor.js';
import { DomainError } from '../../domain/errors.js';
import type { Database } from '../../storage/schema.js';
import type { UseCaseDeps } from '../deps.js';
import { hookUrls, triggerUrl } from './hook-urls.js';
import type { ProviderHooks, RegisteredHook } from './provider-hook.js';
import { siteOfActor } from './site-of-actor.js';
import { newHookSecret, newTriggerToken } from './webhook-secrets.js';

type Row = Database['site_webhooks'];
type Body = Static<typeof ConfigureWebhookBody>;

export interface WebhookRecord {
  site: string;
  enabled: boolean;
  branches: string[] | null;
  urls: Record<string, string> | null;
  secret: string | null;
  trigger_url: string | null;
  registered: { provider: string; repository: string; hook_id: string | null } | null;
  secret_rotated_at: string | null;
  trigger_rotated_at: string | null;
  created_at: string | null;
  updated_at: string | null;
}

/** GET /api/v1/sites/<uuid>/webhook: the configuration without its secrets; `enabled: false` when there is none. */
export async function getWebhook(deps: UseCaseDeps, actor: Actor, siteUuid: string, origin: string): Promise<WebhookRecord> {
  const site = await siteOfActor(deps, actor, siteUuid);
  const row = await deps.db.selectFrom('site_webhooks').selectAll().where('site_uuid', '=', site.uuid).executeTakeFirst();
  return record(site.uuid, row ?? null, origin, {});
}

/**
 * POST /api/v1/sites/<uuid>/webhook: creates the webhook (a new secret and trigger URL, both shown
 * in this answer only) or, on a configured one, replaces what `rotate` names (default both) and
 * sets `branches` when given. The old secret or URL stops working at once.
 */
export async function configureWebhook(
  deps: UseCaseDeps,
  actor: Actor,
  siteUuid: string,
  body: Body,
  origin: string,
  hooks: ProviderHooks | null,
): Promise<{ created: boolean; record: WebhookRecord }> {
  const site = await siteOfActor(deps, actor, siteUuid);
  if (body.register && !hooks)
    throw new DomainError('not_implemented', 'Registering the hook at the provider is not available in this Siteplane.');
  const now = deps.clock.now().toISOString();
  const existing = await deps.db.selectFrom('site_webhooks').selectAll().where('site_uuid', '=', site.uuid).executeTakeFirst();
  const rotate = new Set(existing ? (body.rotate ?? ['secret', 'trigger_url']) : ['secret', 'trigger_url']);
  const secret = rotate.has('secret') ? newHookSecret() : null;
  const trigger = rotate.has('trigger_url') ? newTriggerToken() : null;
  const branches =
    body.branches === undefined ? (existing?.branches ?? null) : body.branches === null ? null : JSON.stringify(body.branches);
  const url = (provider: string) => hookUrls(origin, site.uuid)[provider as 'github'] ?? '';
  const current = existing ? registeredOf(existing) : null;
  let registered: RegisteredHook | null = current;
  let replaces: RegisteredHook | null = null;
  if (body.register && hooks) {
    // Creates the hook, or gives the site's existing one there the (new) secret: never a second.
    ({ registered, replaces } = await hooks.register({
      actor,
      vcProfile: body.register.vcProfile,
      repository: body.register.repository,
      url,
      secret: secret ?? deps.secrets.open((existing as Row).secret_enc),
      current,
    }));
  } else if (secret && current?.hook_id && hooks) {
    // The provider must sign with the new secret from now on, or every push would be rejected.
    if ((await hooks.updateSecret(current, url, secret)) === 'gone') registered = null;
  }
  const registeredJson = registered
    ? JSON.stringify({ provider: registered.provider, repository: registered.repository, hook_id: registered.hook_id })
    : null;
  let row: Row;
  if (existing) {
    row = {
      ...existing,
      ...(secret ? { secret_enc: deps.secrets.seal(secret), secret_rotated_at: now } : {}),
      ...(trigger ? { trigger_hash: trigger.hash, trigger_rotated_at: now } : {}),
      branches,
      registered: registeredJson,
      vc_profile_uuid: registered?.vc_profile_uuid ?? null,
      updated_at: now,
    };
    await deps.db
      .updateTable('site_webhooks')
      .set({
        secret_enc: row.secret_enc,
        trigger_hash: row.trigger_hash,
        branches: row.branches,
        registered: row.registered,
        vc_profile_uuid: row.vc_profile_uuid,
        secret_rotated_at: row.secret_rotated_at,
        trigger_rotated_at: row.trigger_rotated_at,
        updated_at: now,
      })
      .where('site_uuid', '=', site.uuid)
      .execute();
  } else {
    row = {
      site_uuid: site.uuid,
      team_uuid: site.team_uuid,
      secret_enc: deps.secrets.seal(secret as string),
      trigger_hash: (trigger as { hash: string }).hash,
      branches,
      registered: registeredJson,
      vc_profile_uuid: registered?.vc_profile_uuid ?? null,
      secret_rotated_at: now,
      trigger_rotated_at: now,
      created_at: now,
      updated_at: now,
    };
    // Two first POSTs at once: the second finds the row taken and is told to retry (it would rotate).
    const inserted = await deps.db
      .insertInto('site_webhooks')
      .values(row)
      .onConflict((oc) => oc.column('site_uuid').doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0)
      throw new DomainError('conflict', 'The webhook was created by another request at the same time; retry to rotate it.');
  }
  // Registered for another repository or through another profile: the earlier hook would keep
  // posting with a secret it shares with the new one; it is removed (best effort, recorded).
  if (replaces && hooks) await hooks.remove(site.uuid, replaces, 'replaced');
  return { created: !existing, record: record(site.uuid, row, origin, { secret, trigger: trigger?.token ?? null }) };
}

/**
 * DELETE /api/v1/sites/<uuid>/webhook: hooks to the site answer as for an unknown site from now on,
 * and the hook registered at the provider is deleted there (best effort: the outcome is recorded in
 * webhook_removals; turning the webhook off succeeds either way).
 */
export async function deleteWebhook(deps: UseCaseDeps, actor: Actor, siteUuid: string, hooks: ProviderHooks): Promise<void> {
  const site = await siteOfActor(deps, actor, siteUuid);
  const removed = await deps.db.deleteFrom('site_webhooks').where('site_uuid', '=', site.uuid).returningAll().execute();
  const registered = removed[0] ? registeredOf(removed[0]) : null;
  if (registered?.hook_id) await hooks.remove(site.uuid, registered, 'disabled');
}

/** The hook created at the provider, if any, with the profile it was created through. */
export function registeredOf(row: Pick<Row, 'registered' | 'vc_profile_uuid'>): RegisteredHook | null {
  if (!row.registered) return null;
  const kept = JSON.parse(row.registered) as Omit<RegisteredHook, 'vc_profile_uuid'>;
  return { ...kept, vc_profile_uuid: row.vc_profile_uuid };
}

function record(
  siteUuid: string,
  row: Row | null,
  origin: string,
  shown: { secret?: string | null; trigger?: string | null },
): WebhookRecord {
  return {
    site: siteUuid,
    enabled: row !== null,
    branches: row?.branches ? (JSON.parse(row.branches) as string[]) : null,
    urls: row ? hookUrls(origin, siteUuid) : null,
    secret: shown.secret ?? null,
    trigger_url: shown.trigger ? triggerUrl(origin, shown.trigger) : null,
    registered: row?.registered ? JSON.parse(row.registered) : null,
    secret_rotated_at: row?.secret_rotated_at ?? null,
    trigger_rotated_at: row?.trigger_rotated_at ?? null,
    created_at: row?.created_at ?? null,
    updated_at: row?.updated_at ?? null,
  };
}
