/**
 * One best-effort removal of something Siteplane created at a hosted provider (a deploy key, a
 * push webhook) through the profile it was created with. Never throws: the caller records the
 * outcome (deploy_key_removals, webhook_removals), so what is left at the provider is known and
 * named for removal by hand. A 404 counts as already gone (removed by hand, or the repository is).
 */
import type { Kysely } from 'kysely';
import type { Clock } from '../../app/clock.js';
import type { SecretBox } from '../../crypto/secret-box.js';
import type { Database } from '../../storage/schema.js';
import { VcsError, type VcsProfileConfig, type VcsProviderName } from '../../vcs/provider.js';

export interface RemovalDeps {
  db: Kysely<Database>;
  secrets: SecretBox;
  clock: Clock;
  fetch: typeof fetch;
}

export type RemovalOutcome = 'removed' | 'already_gone' | 'failed';

/** The profile's config with its token, or null when the profile (or its token) is gone. */
export async function profileForRemoval(deps: RemovalDeps, vcProfileUuid: string | null): Promise<VcsProfileConfig | null> {
  if (!vcProfileUuid) return null;
  const profile = await deps.db.selectFrom('vc_profiles').selectAll().where('uuid', '=', vcProfileUuid).executeTakeFirst();
  if (!profile?.token_enc) return null;
  return {
    provider: profile.provider as VcsProviderName,
    baseUrl: profile.base_url,
    token: deps.secrets.open(profile.token_enc),
    repositories: [],
  };
}

/**
 * Runs `remove` with the profile's config. `byHand` ends a failure's detail, naming what to remove
 * by hand (e.g. "remove deploy key 7 from acme/site").
 */
export async function removeAtProvider(
  deps: RemovalDeps,
  vcProfileUuid: string | null,
  byHand: string,
  remove: (config: VcsProfileConfig) => Promise<void>,
): Promise<{ outcome: RemovalOutcome; detail: string | null }> {
  const config = await profileForRemoval(deps, vcProfileUuid);
  if (!config) return { outcome: 'failed', detail: `the version-control profile it was created with is gone; ${byHand} by hand` };
  try {
    await remove(config);
    return { outcome: 'removed', detail: null };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof VcsError && error.kind === 'not_found') return { outcome: 'already_gone', detail: message };
    return { outcome: 'failed', detail: `${message}; ${byHand} by hand` };
  }
}
