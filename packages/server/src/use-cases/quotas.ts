import type { Kysely } from 'kysely';
import { DomainError } from '../domain/errors.js';
import type { Dialect } from '../storage/database.js';
import type { Database } from '../storage/schema.js';

/** Records a team may hold at once (SITEPLANE_QUOTA_*); 0 means no limit. */
export interface Quotas {
  servers: number;
  sites: number;
  /** DNS and version-control profiles together. */
  profiles: number;
}

export type QuotaKind = keyof Quotas;

const SETTING: Record<QuotaKind, string> = {
  servers: 'SITEPLANE_QUOTA_SERVERS',
  sites: 'SITEPLANE_QUOTA_SITES',
  profiles: 'SITEPLANE_QUOTA_PROFILES',
};

/**
 * Throws quota_exceeded when the team already holds its quota of live records of the kind. Call it
 * in the transaction that inserts the record: on PostgreSQL the team's row is locked first, so two
 * concurrent creates of one team count one after the other and cannot both take the last place
 * (SQLite runs one write transaction at a time anyway).
 */
export async function assertWithinQuota(
  trx: Kysely<Database>,
  dialect: Dialect,
  quotas: Quotas,
  team: string,
  kind: QuotaKind,
): Promise<void> {
  const quota = quotas[kind];
  if (quota <= 0) return;
  if (dialect === 'postgres') await trx.selectFrom('teams').select('uuid').where('uuid', '=', team).forUpdate().execute();
  const held = await countLive(trx, team, kind);
  if (held >= quota) {
    throw new DomainError(
      'quota_exceeded',
      `The team holds ${held} ${kind}, its quota (${SETTING[kind]} = ${quota}); delete one or ask the operator to raise it.`,
      { quota: kind, limit: quota },
    );
  }
}

async function countLive(trx: Kysely<Database>, team: string, kind: QuotaKind): Promise<number> {
  const count = async (table: 'servers' | 'sites' | 'dns_profiles' | 'vc_profiles', live: boolean) => {
    let q = trx
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<string | number>().as('n'))
      .where('team_uuid', '=', team);
    // Servers and sites are soft-deleted; profiles are removed outright.
    if (live) q = q.where('deleted_at', 'is', null);
    return Number((await q.executeTakeFirstOrThrow()).n);
  };
  if (kind === 'servers') return count('servers', true);
  if (kind === 'sites') return count('sites', true);
  return (await count('dns_profiles', false)) + (await count('vc_profiles', false));
}
