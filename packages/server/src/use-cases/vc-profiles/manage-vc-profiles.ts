import { randomUUID } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { CreateVcProfileBody } from '@siteplane/contract';
import type { Actor } from '../../domain/auth/actor.js';
import { notFound } from '../../domain/errors.js';
import { UUID_RE, ValidationError } from '../../domain/field-errors.js';
import { keyset } from '../../storage/paging.js';
import type { Database } from '../../storage/schema.js';
import type { VcsProfileConfig, VcsProviderName } from '../../vcs/provider.js';
import type { UseCaseDeps } from '../deps.js';
import { type PageRequest, toPage } from '../pagination.js';
import { teamFor } from '../team-of.js';
import { vcsDomainError } from './vcs-errors.js';

export const vcProfileRecord = (r: Database['vc_profiles']) => ({
  uuid: r.uuid,
  team: r.team_uuid,
  provider: r.provider,
  name: r.name,
  base_url: r.base_url,
  account: r.account_login,
  created_at: r.created_at,
});

/** POST /api/v1/vc-profiles: the token is checked against the provider, then stored encrypted. */
export async function createVcProfile(deps: UseCaseDeps, actor: Actor, body: Static<typeof CreateVcProfileBody>) {
  const provider = body.provider as VcsProviderName;
  if (provider === 'git') {
    if (!body.repositories?.length)
      throw new ValidationError([{ field: 'repositories', code: 'required', message: 'A git profile lists its remote URLs.' }]);
    if (body.token)
      throw new ValidationError([
        { field: 'token', code: 'not_allowed', message: 'Put credentials in the remote URLs of a git profile.' },
      ]);
  } else {
    if (body.repositories)
      throw new ValidationError([{ field: 'repositories', code: 'not_allowed', message: 'Only git profiles list remotes.' }]);
    if (!body.token)
      throw new ValidationError([{ field: 'token', code: 'required', message: `A ${provider} profile needs a token.` }]);
  }
  const config: VcsProfileConfig = {
    provider,
    baseUrl: body.baseUrl ?? null,
    token: body.token ?? null,
    repositories: body.repositories ?? [],
  };
  const uuid = randomUUID();
  let account: string | null;
  try {
    account = (await deps.integrations.vcsProvider(uuid, config).whoami()).account;
  } catch (error) {
    throw vcsDomainError(error);
  }
  const row = {
    uuid,
    team_uuid: await teamFor(deps, actor, body.team),
    provider,
    name: body.name,
    base_url: config.baseUrl,
    token_enc: body.token ? deps.secrets.seal(body.token) : null,
    repositories_enc: body.repositories ? deps.secrets.sealJson(body.repositories) : null,
    account_login: account,
    created_at: deps.clock.now().toISOString(),
  };
  await deps.db.insertInto('vc_profiles').values(row).execute();
  return vcProfileRecord(row);
}

export async function findVcProfile(deps: UseCaseDeps, actor: Actor, uuid: string) {
  if (!UUID_RE.test(uuid)) throw notFound('Version control profile');
  const row = await deps.db
    .selectFrom('vc_profiles')
    .selectAll()
    .where('uuid', '=', uuid.toLowerCase())
    .where('team_uuid', 'in', actor.teamUuids)
    .executeTakeFirst();
  if (!row) throw notFound('Version control profile');
  return row;
}

export async function listVcProfiles(deps: UseCaseDeps, actor: Actor, page: PageRequest) {
  const rows = await keyset(
    deps.db.selectFrom('vc_profiles').selectAll().where('team_uuid', 'in', actor.teamUuids),
    'vc_profiles',
    page,
  ).execute();
  return toPage(rows, page, vcProfileRecord);
}

export async function deleteVcProfile(deps: UseCaseDeps, actor: Actor, uuid: string) {
  const row = await findVcProfile(deps, actor, uuid);
  await deps.db.deleteFrom('vc_profiles').where('uuid', '=', row.uuid).execute();
}

export function profileConfig(deps: UseCaseDeps, row: Database['vc_profiles']): VcsProfileConfig {
  return {
    provider: row.provider as VcsProviderName,
    baseUrl: row.base_url,
    token: row.token_enc ? deps.secrets.open(row.token_enc) : null,
    repositories: row.repositories_enc ? deps.secrets.openJson<string[]>(row.repositories_enc) : [],
  };
}
