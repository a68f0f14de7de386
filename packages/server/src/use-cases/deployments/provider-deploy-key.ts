/**
 * A site's deploy key at a hosted provider (issue 11 item 1): registered read-only through the
 * profile's token when the source is bound with `access: "deploy_key"`, removed there when the
 * source is unbound or re-bound elsewhere or the site is deleted. A token without the right to
 * manage deploy keys is not an error: the binding is kept with the key marked not registered and
 * why, and the user adds the public key by hand. A removal is best effort and always recorded
 * (deploy_key_removals), so a key left at the provider is known.
 */
import type { Actor } from '../../domain/auth/actor.js';
import { keyset } from '../../storage/paging.js';
import type { Database } from '../../storage/schema.js';
import { timeOrderedUuid } from '../../storage/time-ordered-uuid.js';
import { addDeployKey, removeDeployKey } from '../../vcs/deploy-keys.js';
import { VcsError, type VcsProfileConfig, type VcsProviderName } from '../../vcs/provider.js';
import type { UseCaseDeps } from '../deps.js';
import { type PageRequest, toPage } from '../pagination.js';
import { providerFetch } from '../vc-profiles/provider-fetch.js';
import { type RemovalDeps, removeAtProvider } from '../vc-profiles/remove-at-provider.js';
import { vcsDomainError } from '../vc-profiles/vcs-errors.js';
import { deployableSite } from './deploy-site.js';

export interface DeployKeyRegistration {
  status: 'registered' | 'not_registered';
  provider_key_id: string | null;
  reason: string | null;
}

/** The right each provider asks of the token, named as its documentation names it. */
const RIGHT: Record<Exclude<VcsProviderName, 'git'>, string> = {
  github: 'admin on the repository (classic token: `repo` scope; fine-grained: "Administration: write")',
  gitlab: 'the Maintainer role in the project',
  bitbucket: 'the `repository:admin` permission',
  gitea: 'admin on the repository',
};

/**
 * Adds the site's public key to the repository, read-only. The provider refusing (401/403, or 404
 * as GitHub hides what a token may not manage) answers `not_registered` with the reason; any other
 * failure (rate limit, unreachable, a broken answer) is the request's error, nothing stored.
 */
export async function registerDeployKey(
  deps: Pick<UseCaseDeps, 'egress'>,
  config: VcsProfileConfig,
  key: { repository: string; title: string; publicKey: string },
): Promise<DeployKeyRegistration> {
  try {
    const { id } = await addDeployKey(config, key, { fetch: providerFetch(deps.egress) });
    return { status: 'registered', provider_key_id: id, reason: null };
  } catch (error) {
    if (error instanceof VcsError && (error.kind === 'auth_failed' || error.kind === 'not_found')) {
      const right = config.provider === 'git' ? 'an API' : RIGHT[config.provider];
      return {
        status: 'not_registered',
        provider_key_id: null,
        reason: `The provider refused to add the deploy key (${error.message}). The profile's token needs ${right}. Add deploy_public_key to ${key.repository} as a read-only deploy key by hand, or PUT the source again once the token has that right.`,
      };
    }
    throw vcsDomainError(error, 'repository');
  }
}

export type { RemovalDeps };

type RegisteredKey = Pick<
  Database['site_sources'],
  'site_uuid' | 'vc_profile_uuid' | 'provider' | 'repository' | 'deploy_key_provider_id'
>;

/**
 * Removes a registered key at its provider through the profile it was registered with, once, and
 * records the outcome. Never throws: what could not be removed is recorded as `failed` with why.
 * Null when the source had no registered key.
 */
export async function removeRegisteredKey(
  deps: RemovalDeps,
  source: RegisteredKey,
  cause: Database['deploy_key_removals']['cause'],
): Promise<{ outcome: Database['deploy_key_removals']['outcome']; detail: string | null } | null> {
  const keyId = source.deploy_key_provider_id;
  if (!keyId) return null;
  const { outcome, detail } = await removeAtProvider(
    deps,
    source.vc_profile_uuid,
    `remove deploy key ${keyId} from ${source.repository}`,
    (config) => removeDeployKey(config, { repository: source.repository, id: keyId }, { fetch: deps.fetch }),
  );
  const now = deps.clock.now();
  await deps.db
    .insertInto('deploy_key_removals')
    .values({
      uuid: timeOrderedUuid(now.getTime()),
      site_uuid: source.site_uuid,
      vc_profile_uuid: source.vc_profile_uuid,
      provider: source.provider,
      repository: source.repository,
      provider_key_id: keyId,
      cause,
      outcome,
      detail: detail?.slice(0, 2000) ?? null,
      created_at: now.toISOString(),
    })
    .execute();
  return { outcome, detail };
}

/**
 * GET /api/v1/sites/<uuid>/source/deploy-key-removals: every removal of a registered key attempted
 * for the site (unbind, re-bind), oldest first, in the list envelope; a deleted site's own is in its
 * deletion's operation log.
 */
export async function listDeployKeyRemovals(deps: UseCaseDeps, actor: Actor, siteUuid: string, page: PageRequest) {
  const { site } = await deployableSite(deps.db, { actor }, siteUuid);
  const rows = await keyset(
    deps.db.selectFrom('deploy_key_removals').selectAll().where('site_uuid', '=', site.uuid),
    'deploy_key_removals',
    page,
  ).execute();
  return toPage(rows, page, (row) => ({
    uuid: row.uuid,
    provider: row.provider,
    repository: row.repository,
    provider_key_id: row.provider_key_id,
    cause: row.cause,
    outcome: row.outcome,
    detail: row.detail,
    created_at: row.created_at,
  }));
}
