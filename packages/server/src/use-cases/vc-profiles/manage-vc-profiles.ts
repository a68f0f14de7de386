import { randomUUID } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { CreateVcProfileBody } from '@siteplane/contract';
import type { Actor } from '../../domain/auth/actor.js';
import { notFound } from '../../domain/errors.js';
import { UUID_RE, ValidationError } from '../../domain/field-errors.js';
import { keyset } from '../../storage/paging.js';
import type { Database } from '../../storage/schema.js';
import { uniqueViolation } from '../../storage/unique-violation.js';
import type { VcsProfileConfig, VcsProviderName } from '../../vcs/provider.js';
import type { UseCaseDeps } from '../deps.js';
import { type PageRequest, toPage } from '../pagination.js';
import { assertWithinQuota } from '../quotas.js';
import { teamFor } from '../team-of.js';
import { checkVcProfileBody } from './validate-vc-profile.js';
import { creationError } from './vcs-errors.js';

export const vcProfileRecord = (r: Database['vc_profiles']) => ({
  uuid: r.uuid,
  team: r.team_uuid,
  provider: r.provider,
  name: r.name,
  base_url: r.base_url,
  account: r.account_login,
  created_at: r.created_at,
});

/**
 * POST /api/v1/vc-profiles: the body's rules first (nothing is sent to a provider for a body that
 * cannot work), then the credentials are checked against the provider, then stored encrypted. The
 * token is never part of an answer or a message.
 */
/** The check and the unique index (migration 003) refuse a taken name alike. */
const NAME_TAKEN = { field: 'name', code: 'name_taken' as const, message: 'This team already has a profile with this name.' };

export async function createVcProfile(deps: UseCaseDeps, actor: Actor, body: Static<typeof CreateVcProfileBody>) {
  const { config, errors } = checkVcProfileBody(body);
  const team = await teamFor(deps, actor, body.team).catch((error: unknown) => {
    if (!(error instanceof ValidationError)) throw error;
    errors.push(...error.errors); // reported with the body's other violations
    return null;
  });
  // Unique per team so `siteplane vc` users can tell profiles apart. Checked here to report it with
  // the body's other violations; the unique index (migration 003) refuses the loser of a race.
  const taken =
    team !== null &&
    (await deps.db
      .selectFrom('vc_profiles')
      .select('uuid')
      .where('team_uuid', '=', team)
      .where('name', '=', body.name)
      .executeTakeFirst());
  if (taken) errors.push(NAME_TAKEN);
  if (errors.length > 0 || team === null) throw new ValidationError(errors);

  const uuid = randomUUID();
  let account: string | null;
  try {
    account = (await deps.integrations.vcsProvider(uuid, config).whoami()).account;
  } catch (error) {
    throw creationError(error, config.provider, config.baseUrl !== null);
  }
  const row = {
    uuid,
    team_uuid: team,
    provider: config.provider,
    name: body.name,
    base_url: config.baseUrl,
    token_enc: config.token ? deps.secrets.seal(config.token) : null,
    repositories_enc: config.provider === 'git' ? deps.secrets.sealJson(config.repositories) : null,
    account_login: account,
    created_at: deps.clock.now().toISOString(),
  };
  try {
    await deps.db.transaction().execute(async (trx) => {
      await assertWithinQuota(trx, deps.dialect, deps.quotas, team, 'profiles');
      await trx.insertInto('vc_profiles').values(row).execute();
    });
  } catch (error) {
    if (!uniqueViolation(error)) throw error;
    throw new ValidationError([NAME_TAKEN]);
  }
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
