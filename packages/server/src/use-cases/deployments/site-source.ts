import type { Static } from '@sinclair/typebox';
import type { PutSiteSourceBody } from '@siteplane/contract';
import { generateSshKeyPair } from '../../crypto/ssh-key-pair.js';
import type { Actor } from '../../domain/auth/actor.js';
import { DomainError } from '../../domain/errors.js';
import { UUID_RE, ValidationError } from '../../domain/field-errors.js';
import type { Database } from '../../storage/schema.js';
import { wantsDeployKey } from '../../vcs/git.js';
import { parseGitRemote } from '../../vcs/git-remote.js';
import { VcsError, type VcsProviderName } from '../../vcs/provider.js';
import type { UseCaseDeps } from '../deps.js';
import { profileConfig } from '../vc-profiles/manage-vc-profiles.js';
import { providerFetch } from '../vc-profiles/provider-fetch.js';
import { vcsDomainError } from '../vc-profiles/vcs-errors.js';
import { deployableSite } from './deploy-site.js';
import { type DeployKeyRegistration, registerDeployKey, removeRegisteredKey } from './provider-deploy-key.js';

type SourceRow = Database['site_sources'];

export function sourceRecord(row: SourceRow) {
  return {
    site: row.site_uuid,
    vc_profile: row.vc_profile_uuid,
    provider: row.provider,
    repository: row.repository,
    branch: row.branch,
    app_folder: row.app_folder,
    auth: row.auth,
    deploy_public_key: row.deploy_public_key,
    deploy_key_registration: row.deploy_key_status
      ? { status: row.deploy_key_status, provider_key_id: row.deploy_key_provider_id, reason: row.deploy_key_reason }
      : null,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

/** GET /api/v1/sites/<uuid>/source: the binding, or 404 when the site has none (artifact-only). */
export async function getSiteSource(deps: UseCaseDeps, actor: Actor, siteUuid: string) {
  const { site } = await deployableSite(deps.db, { actor }, siteUuid);
  const row = await deps.db.selectFrom('site_sources').selectAll().where('site_uuid', '=', site.uuid).executeTakeFirst();
  if (!row) throw new DomainError('not_found', 'The site has no source; it deploys by artifact upload only.');
  return sourceRecord(row);
}

/**
 * DELETE (or PUT null): the site deploys by artifact upload only; its deploy key is forgotten, and
 * one registered at a provider is removed there (best effort, recorded in deploy_key_removals).
 */
export async function unbindSiteSource(deps: UseCaseDeps, actor: Actor, siteUuid: string): Promise<void> {
  const { site } = await deployableSite(deps.db, { actor }, siteUuid);
  const existing = await deps.db.selectFrom('site_sources').selectAll().where('site_uuid', '=', site.uuid).executeTakeFirst();
  await deps.db.deleteFrom('site_sources').where('site_uuid', '=', site.uuid).execute();
  if (existing) await removeRegisteredKey(removalDeps(deps), existing, 'unbound');
}

const removalDeps = (deps: UseCaseDeps) => ({
  db: deps.db,
  secrets: deps.secrets,
  clock: deps.clock,
  fetch: providerFetch(deps.egress),
});

/**
 * PUT /api/v1/sites/<uuid>/source: checks the profile (the site's team's), the repository and the
 * branch through the profile's provider (422 naming the field otherwise), then stores the binding.
 * The clone URL is sealed (a git profile's remote may carry credentials). An ssh remote of a git
 * profile gets a per-site ed25519 deploy key: the public half is returned for the user to add to
 * the repository (read-only); a key already generated for the site is kept, so a re-binding does
 * not ask the user to add a new one. Such a remote is read with that key: refused (the user could
 * not add it yet), the site is bound with `not_registered` and why, its branch unchecked. Hosted providers fetch with the profile's token (opened only
 * for the deploy job), or with `access: "deploy_key"` over their ssh clone address with a per-site
 * key registered read-only through the profile's token (provider-deploy-key.ts); a key registered
 * for another repository or profile before is removed there once the new binding is stored.
 */
export async function putSiteSource(deps: UseCaseDeps, actor: Actor, siteUuid: string, body: Static<typeof PutSiteSourceBody>) {
  const { site } = await deployableSite(deps.db, { actor }, siteUuid);
  const profile = UUID_RE.test(body.vcProfile)
    ? await deps.db
        .selectFrom('vc_profiles')
        .selectAll()
        .where('uuid', '=', body.vcProfile.toLowerCase())
        .where('team_uuid', '=', site.team_uuid)
        .executeTakeFirst()
    : undefined;
  if (!profile)
    throw new ValidationError([
      { field: 'vcProfile', code: 'not_found', message: 'No version-control profile of the site’s team has this uuid.' },
    ]);
  if (profile.provider === 'git' && body.access !== undefined)
    throw new ValidationError([
      {
        field: 'access',
        code: 'not_applicable',
        message: 'A plain git profile fetches as its remote says: an ssh remote with a deploy key, an https one as given.',
      },
    ]);
  const access = body.access ?? 'token';
  const config = profileConfig(deps, profile);
  // A plain git ssh remote is read with the site's deploy key: the key exists before the check.
  const gitRemote =
    profile.provider === 'git' ? config.repositories.map(parseGitRemote).find((r) => r?.name === body.repository) : undefined;
  const usesKey = gitRemote ? gitRemote.transport === 'ssh' : profile.provider !== 'git' && access === 'deploy_key';
  const existing = await deps.db.selectFrom('site_sources').selectAll().where('site_uuid', '=', site.uuid).executeTakeFirst();
  const hostedKey = profile.provider !== 'git' && usesKey;
  // A hosted provider's key belongs to one repository there: kept only for the same one.
  const sameRepository = existing?.vc_profile_uuid === profile.uuid && existing.repository === body.repository;
  let publicKey: string | null = null;
  let privateKeyEnc: string | null = null;
  if (usesKey) {
    if (existing?.deploy_public_key && existing.deploy_private_key_enc && (!hostedKey || sameRepository)) {
      publicKey = existing.deploy_public_key;
      privateKeyEnc = existing.deploy_private_key_enc;
    } else {
      const keys = generateSshKeyPair(`siteplane-deploy@${site.domain}`);
      publicKey = keys.public;
      privateKeyEnc = deps.secrets.seal(keys.private);
    }
  }
  const gitKey = gitRemote?.transport === 'ssh' && privateKeyEnc ? deps.secrets.open(privateKeyEnc) : undefined;
  let detail: Awaited<ReturnType<ReturnType<UseCaseDeps['integrations']['vcsProvider']>['getRepository']>> | null = null;
  let registration: DeployKeyRegistration | null = null;
  try {
    detail = await deps.integrations
      .vcsProvider(profile.uuid, config)
      .getRepository(body.repository, gitKey === undefined ? undefined : { sshPrivateKey: gitKey });
    if (gitKey !== undefined) registration = { status: 'registered', provider_key_id: null, reason: null };
  } catch (error) {
    if (gitRemote && wantsDeployKey(gitRemote, error)) {
      // The user has not added the key yet (they see it in this answer): bound, branch unchecked.
      registration = { status: 'not_registered', provider_key_id: null, reason: refusedKeyReason(error) };
    } else if (error instanceof VcsError && error.kind === 'not_found') {
      throw new ValidationError([{ field: 'repository', code: 'repository_not_found', message: error.message }]);
    } else throw vcsDomainError(error, 'repository');
  }
  if (detail && !detail.branches.some((b) => b.name === body.branch))
    throw new ValidationError([
      { field: 'branch', code: 'not_found', message: `${body.repository} has no branch ${JSON.stringify(body.branch)}.` },
    ]);
  const clone = cloneUrl(profile.provider as VcsProviderName, config.repositories, body.repository, detail, config.token, access);
  if (hostedKey && publicKey) {
    registration =
      sameRepository && existing?.deploy_key_status === 'registered' && existing.deploy_public_key === publicKey
        ? { status: 'registered', provider_key_id: existing.deploy_key_provider_id, reason: null }
        : await registerDeployKey(deps, config, {
            repository: body.repository,
            title: `Siteplane ${site.domain}`,
            publicKey,
          });
  }
  const now = deps.clock.now().toISOString();
  const row: SourceRow = {
    site_uuid: site.uuid,
    vc_profile_uuid: profile.uuid,
    provider: profile.provider,
    repository: body.repository,
    branch: body.branch,
    app_folder: body.appFolder ?? null,
    clone_url_enc: deps.secrets.seal(clone.url),
    auth: clone.auth,
    deploy_public_key: publicKey,
    deploy_private_key_enc: privateKeyEnc,
    deploy_key_provider_id: registration?.provider_key_id ?? null,
    deploy_key_status: registration?.status ?? null,
    deploy_key_reason: registration?.reason ?? null,
    created_at: existing?.created_at ?? now,
    updated_at: now,
  };
  await deps.db.transaction().execute(async (trx) => {
    await trx.deleteFrom('site_sources').where('site_uuid', '=', site.uuid).execute();
    await trx.insertInto('site_sources').values(row).execute();
  });
  // The key registered for the previous binding, when this one does not use it any more.
  if (existing?.deploy_key_provider_id && existing.deploy_key_provider_id !== row.deploy_key_provider_id)
    await removeRegisteredKey(removalDeps(deps), existing, 'rebound');
  return sourceRecord(row);
}

/**
 * Where the server fetches from, and how it authenticates: a git profile's remote as listed (an
 * ssh remote with the site's deploy key; credentials in an https URL stay in the sealed URL and are
 * moved out of it for the fetch); a hosted provider's repository page + `.git`, with the profile's
 * token when it has one, or its ssh clone address with the site's deploy key.
 */
function cloneUrl(
  provider: VcsProviderName,
  remotes: string[],
  repository: string,
  detail: { web_url: string | null; ssh_url: string | null } | null,
  token: string | null,
  access: 'token' | 'deploy_key',
): { url: string; auth: SourceRow['auth'] } {
  if (provider === 'git') {
    const remote = remotes.map(parseGitRemote).find((r) => r?.name === repository);
    if (!remote)
      throw new ValidationError([
        { field: 'repository', code: 'repository_not_found', message: 'Not a remote of this profile.' },
      ]);
    if (remote.transport === 'ssh') return { url: remote.url, auth: 'deploy_key' };
    return { url: remote.url, auth: remote.secrets.length > 0 ? 'token' : 'none' };
  }
  if (!detail) throw new Error('a hosted repository is always read before its clone address');
  const webUrl = detail.web_url;
  if (access === 'deploy_key') {
    const ssh = detail.ssh_url ? parseGitRemote(detail.ssh_url) : null;
    if (ssh?.transport !== 'ssh' || !detail.ssh_url)
      throw new DomainError('provider_error', `The provider gave no ssh address for ${repository} to fetch with a deploy key.`);
    return { url: detail.ssh_url, auth: 'deploy_key' };
  }
  if (!webUrl || !/^https?:\/\//.test(webUrl))
    throw new DomainError('provider_error', `The provider gave no web address for ${repository} to clone from.`);
  return { url: `${webUrl.replace(/\/+$/, '')}.git`, auth: token ? 'token' : 'none' };
}

/** Why a plain git remote is bound with its key not yet accepted, and what the user does about it. */
function refusedKeyReason(error: unknown): string {
  const said = error instanceof Error ? error.message : String(error);
  return `The remote refused the site's deploy key (${said}). Add deploy_public_key to the repository's git server as a read-only key, then deploy (or PUT the source again to check the branch). Deploys fail until then.`;
}
