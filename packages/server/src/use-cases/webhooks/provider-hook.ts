/**
 * The site's push webhook at its provider (issue 11 item 6), kept in step with the site's own
 * webhook: created (or, when that repository's hook exists already, updated) through a profile of
 * the actor's teams; its secret replaced there when the secret is rotated, so the provider never
 * signs with a secret Siteplane no longer accepts; and deleted there when the webhook is turned
 * off, re-registered elsewhere or the site deleted (best effort, recorded in webhook_removals).
 */
import type { Actor } from '../../domain/auth/actor.js';
import { DomainError } from '../../domain/errors.js';
import { ValidationError } from '../../domain/field-errors.js';
import type { Database } from '../../storage/schema.js';
import { timeOrderedUuid } from '../../storage/time-ordered-uuid.js';
import { createWebhook } from '../../vcs/create-webhook.js';
import { deleteWebhook, updateWebhookSecret } from '../../vcs/edit-webhook.js';
import { VcsError, type VcsProfileConfig } from '../../vcs/provider.js';
import type { UseCaseDeps } from '../deps.js';
import { findVcProfile, profileConfig } from '../vc-profiles/manage-vc-profiles.js';
import { providerFetch } from '../vc-profiles/provider-fetch.js';
import { profileForRemoval, type RemovalDeps, type RemovalOutcome, removeAtProvider } from '../vc-profiles/remove-at-provider.js';
import { vcsDomainError } from '../vc-profiles/vcs-errors.js';

/** What is kept of a hook created at a provider (`registered` JSON plus the profile's column). */
export interface RegisteredHook {
  provider: string;
  repository: string;
  hook_id: string | null;
  vc_profile_uuid: string | null;
}

export interface ProviderHooks {
  /**
   * Creates the hook at the provider, or updates the site's hook there (URL and secret) when it
   * was registered through the same profile for the same repository, so there is never a second.
   * `replaces` is the earlier hook to remove once the new one is stored, if another.
   */
  register(input: {
    actor: Actor;
    vcProfile: string;
    repository: string;
    url: (provider: string) => string;
    secret: string;
    current: RegisteredHook | null;
  }): Promise<{ registered: RegisteredHook; replaces: RegisteredHook | null }>;
  /** Gives the provider the rotated secret. `gone`: the hook is no longer there (404). */
  updateSecret(current: RegisteredHook, url: (provider: string) => string, secret: string): Promise<'updated' | 'gone'>;
  /** Deletes the hook at the provider, never throwing; the outcome is recorded. */
  remove(
    siteUuid: string,
    hook: RegisteredHook,
    cause: Database['webhook_removals']['cause'],
  ): Promise<{ outcome: RemovalOutcome; detail: string | null }>;
}

export const providerHooks = (deps: UseCaseDeps): ProviderHooks => {
  const fetch = providerFetch(deps.egress);
  const removal: RemovalDeps = { db: deps.db, secrets: deps.secrets, clock: deps.clock, fetch };
  return {
    async register({ actor, vcProfile, repository, url, secret, current }) {
      const row = await profileOfActor(deps, actor, vcProfile);
      const config = profileConfig(deps, row);
      if (config.provider === 'git')
        throw new ValidationError([
          {
            field: 'register.vcProfile',
            code: 'not_applicable',
            message: 'A plain git profile has no API to create hooks with; use the trigger URL from a git hook.',
          },
        ]);
      const registered = (hook_id: string): RegisteredHook => ({
        provider: config.provider,
        repository,
        hook_id,
        vc_profile_uuid: row.uuid,
      });
      const hookUrl = url(config.provider);
      try {
        const same = current?.hook_id && current.vc_profile_uuid === row.uuid && current.repository === repository;
        if (current?.hook_id && same) {
          const updated = await updateOrGone(config, { repository, id: current.hook_id, url: hookUrl, secret }, fetch);
          if (updated === 'updated') return { registered: registered(current.hook_id), replaces: null };
        }
        const created = await createWebhook(config, { repository, url: hookUrl, secret }, { fetch });
        return { registered: registered(created.id), replaces: current?.hook_id && !same ? current : null };
      } catch (error) {
        throw vcsDomainError(error, 'repository');
      }
    },

    async updateSecret(current, url, secret) {
      const config = current.hook_id ? await profileForRemoval(removal, current.vc_profile_uuid) : null;
      if (!current.hook_id || !config)
        throw new ValidationError([
          {
            field: 'register',
            code: 'required',
            message: `The hook at ${current.provider} (${current.repository}) was registered through a profile Siteplane no longer has; pass register {vcProfile, repository} to give it the new secret.`,
          },
        ]);
      try {
        return await updateOrGone(
          config,
          { repository: current.repository, id: current.hook_id, url: url(config.provider), secret },
          fetch,
        );
      } catch (error) {
        throw vcsDomainError(error, 'repository');
      }
    },

    async remove(siteUuid, hook, cause) {
      const hookId = hook.hook_id ?? '';
      const { outcome, detail } = await removeAtProvider(
        removal,
        hook.vc_profile_uuid,
        `delete hook ${hookId} from ${hook.repository} at ${hook.provider}`,
        (config) => deleteWebhook(config, { repository: hook.repository, id: hookId }, { fetch }),
      );
      const now = deps.clock.now();
      await deps.db
        .insertInto('webhook_removals')
        .values({
          uuid: timeOrderedUuid(now.getTime()),
          site_uuid: siteUuid,
          vc_profile_uuid: hook.vc_profile_uuid,
          provider: hook.provider,
          repository: hook.repository,
          provider_hook_id: hookId,
          cause,
          outcome,
          detail: detail?.slice(0, 2000) ?? null,
          created_at: now.toISOString(),
        })
        .execute();
      return { outcome, detail };
    },
  };
};

async function profileOfActor(deps: UseCaseDeps, actor: Actor, vcProfile: string) {
  try {
    return await findVcProfile(deps, actor, vcProfile);
  } catch (error) {
    if (error instanceof DomainError && error.code === 'not_found')
      throw new ValidationError([{ field: 'register.vcProfile', code: 'not_found', message: 'No such profile for this token.' }]);
    throw error;
  }
}

async function updateOrGone(
  config: VcsProfileConfig,
  hook: { repository: string; id: string; url: string; secret: string },
  fetch: typeof globalThis.fetch,
): Promise<'updated' | 'gone'> {
  try {
    await updateWebhookSecret(config, hook, { fetch });
    return 'updated';
  } catch (error) {
    // Deleted by hand at the provider: nothing signs with the old secret any more.
    if (error instanceof VcsError && error.kind === 'not_found') return 'gone';
    throw error;
  }
}
