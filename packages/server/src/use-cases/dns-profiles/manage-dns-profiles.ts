import { randomUUID } from 'node:crypto';
import type { Static } from '@sinclair/typebox';
import type { CreateDnsProfileBody, ErrorCode, FieldError } from '@siteplane/contract';
import { DnsError, type DnsProviderName } from '../../dns/provider.js';
import type { Actor } from '../../domain/auth/actor.js';
import { DomainError, notFound } from '../../domain/errors.js';
import { UUID_RE, ValidationError } from '../../domain/field-errors.js';
import { keyset } from '../../storage/paging.js';
import type { Database } from '../../storage/schema.js';
import type { UseCaseDeps } from '../deps.js';
import { type PageRequest, toPage } from '../pagination.js';
import { assertWithinQuota } from '../quotas.js';
import { teamFor } from '../team-of.js';

/** Credential fields per provider (ARCHITECTURE §2); `?` marks optional ones. */
const CREDENTIALS: Record<DnsProviderName, string[]> = {
  cloudflare: ['apiToken'],
  digitalocean: ['token'],
  porkbun: ['apiKey', 'secretApiKey'],
  aws: ['accessKeyId', 'secretAccessKey', 'region?'],
};

const record = (r: Database['dns_profiles']) => ({
  uuid: r.uuid,
  team: r.team_uuid,
  provider: r.provider,
  name: r.name,
  verified_at: r.verified_at,
  created_at: r.created_at,
});

export async function createDnsProfile(deps: UseCaseDeps, actor: Actor, body: Static<typeof CreateDnsProfileBody>) {
  const provider = body.provider as DnsProviderName;
  const errors: FieldError[] = [];
  const spec = CREDENTIALS[provider];
  const names = spec.map((s) => s.replace('?', ''));
  for (const field of spec) {
    const name = field.replace('?', '');
    if (!field.endsWith('?') && !body.credentials[name])
      errors.push({ field: `credentials.${name}`, code: 'required', message: `${name} is required for ${provider}.` });
  }
  for (const key of Object.keys(body.credentials)) {
    if (!names.includes(key))
      errors.push({
        field: `credentials.${key}`,
        code: 'unknown_field',
        message: `${provider} credentials are ${names.join(', ')}.`,
      });
  }
  if (errors.length) throw new ValidationError(errors);
  const row = {
    uuid: randomUUID(),
    team_uuid: await teamFor(deps, actor, body.team),
    provider,
    name: body.name,
    credentials_enc: deps.secrets.sealJson(body.credentials),
    verified_at: null,
    created_at: deps.clock.now().toISOString(),
  };
  await deps.db.transaction().execute(async (trx) => {
    await assertWithinQuota(trx, deps.dialect, deps.quotas, row.team_uuid, 'profiles');
    await trx.insertInto('dns_profiles').values(row).execute();
  });
  return record(row);
}

export async function findDnsProfile(deps: UseCaseDeps, actor: Actor, uuid: string) {
  if (!UUID_RE.test(uuid)) throw notFound('DNS profile');
  const row = await deps.db
    .selectFrom('dns_profiles')
    .selectAll()
    .where('uuid', '=', uuid.toLowerCase())
    .where('team_uuid', 'in', actor.teamUuids)
    .executeTakeFirst();
  if (!row) throw notFound('DNS profile');
  return row;
}

export const getDnsProfile = async (deps: UseCaseDeps, actor: Actor, uuid: string) =>
  record(await findDnsProfile(deps, actor, uuid));

export async function listDnsProfiles(deps: UseCaseDeps, actor: Actor, page: PageRequest) {
  const rows = await keyset(
    deps.db.selectFrom('dns_profiles').selectAll().where('team_uuid', 'in', actor.teamUuids),
    'dns_profiles',
    page,
  ).execute();
  return toPage(rows, page, record);
}

export async function deleteDnsProfile(deps: UseCaseDeps, actor: Actor, uuid: string) {
  const row = await findDnsProfile(deps, actor, uuid);
  if (row.uuid === deps.freeDomainDnsProfile) {
    // Every temporary domain's record lives in that zone, and new ones are made there.
    throw new DomainError(
      'conflict',
      'This DNS profile holds the temporary-domain zone (FREE_DOMAIN_DNS_PROFILE); configure another one first.',
    );
  }
  const inUse = await deps.db
    .selectFrom('sites')
    .select('uuid')
    .where('deleted_at', 'is', null)
    .where('team_uuid', '=', row.team_uuid)
    .where('ssl', 'like', `%${row.uuid}%`)
    .limit(1)
    .execute();
  if (inUse.length) throw new DomainError('conflict', 'A site uses this DNS profile for its wildcard certificate.');
  await deps.db.deleteFrom('dns_profiles').where('uuid', '=', row.uuid).execute();
}

/** POST /api/v1/dns-profiles/<uuid>/verify: the credentials checked against the provider itself. */
export async function verifyDnsProfile(deps: UseCaseDeps, actor: Actor, uuid: string) {
  const row = await findDnsProfile(deps, actor, uuid);
  const provider = deps.integrations.dnsProvider(row.provider as DnsProviderName, deps.secrets.openJson(row.credentials_enc));
  try {
    await provider.verify();
  } catch (error) {
    throw dnsDomainError(error);
  }
  const now = deps.clock.now().toISOString();
  await deps.db.updateTable('dns_profiles').set({ verified_at: now }).where('uuid', '=', row.uuid).execute();
  return record({ ...row, verified_at: now });
}

export function dnsDomainError(error: unknown): DomainError {
  if (!(error instanceof DnsError)) return new DomainError('upstream_error', `DNS provider failed: ${(error as Error).message}`);
  const code =
    (
      {
        auth_failed: 'upstream_auth_failed',
        rate_limited: 'upstream_rate_limited',
        unreachable: 'upstream_unavailable',
        zone_not_found: 'upstream_not_found',
        provider_error: 'upstream_error',
      } as Record<string, ErrorCode>
    )[error.kind] ?? 'upstream_error';
  return new DomainError(
    code,
    error.message,
    error.retryAfterSeconds !== undefined ? { retryAfterSeconds: error.retryAfterSeconds } : {},
  );
}
