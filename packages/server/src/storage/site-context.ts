import type { SiteTypeId } from '@siteplane/contract';
import type { Kysely } from 'kysely';
import type { Actor } from '../domain/auth/actor.js';
import { EMPTY_FACTS, type ServerFacts } from '../domain/servers/facts.js';
import type { CreateSiteContext } from '../domain/sites/create-site-context.js';
import type { Database } from './schema.js';

export interface ServerRow {
  uuid: string;
  team_uuid: string;
  ip: string;
  connection: string;
  facts: ServerFacts;
}

/** Loads the server for a create, locking its row on PostgreSQL so creates on one server serialise. */
export async function lockServer(
  trx: Kysely<Database>,
  dialect: 'sqlite' | 'postgres',
  serverUuid: string,
  actor: Actor,
): Promise<ServerRow | null> {
  let query = trx
    .selectFrom('servers')
    .select(['uuid', 'team_uuid', 'ip', 'connection', 'facts'])
    .where('uuid', '=', serverUuid)
    .where('deleted_at', 'is', null)
    .where('team_uuid', 'in', actor.teamUuids);
  if (dialect === 'postgres') query = query.forUpdate();
  const row = await query.executeTakeFirst();
  return row ? { ...row, facts: { ...EMPTY_FACTS, ...(JSON.parse(row.facts) as ServerFacts) } } : null;
}

/** The values of a create request that the uniqueness rules look up (point lookups, not whole tables). */
export interface UniquenessProbe {
  domain?: string;
  database?: string;
  databaseUser?: string;
}

/** What the create rules must know of the server: its facts and whether the requested names are taken. */
export async function loadCreateContext(
  trx: Kysely<Database>,
  server: ServerRow | null,
  ids: { serverUser?: string; dnsProfile?: string },
  actor: Actor,
  probe: UniquenessProbe,
): Promise<CreateSiteContext> {
  const taken = {
    domains: new Set<string>(),
    databases: new Set<string>(),
    databaseUsers: new Set<string>(),
    ports: new Set<number>(),
    singletonTypes: new Set<SiteTypeId>(),
  };
  let dnsProfile: CreateSiteContext['dnsProfile'];
  if (ids.dnsProfile) {
    const row = await trx
      .selectFrom('dns_profiles')
      .select(['uuid', 'provider'])
      .where('uuid', '=', ids.dnsProfile)
      .where('team_uuid', 'in', actor.teamUuids)
      .executeTakeFirst();
    dnsProfile = row ?? null;
  }
  if (!server) return { server: null, serverUserExists: false, dnsProfile, taken };
  const live = () => trx.selectFrom('sites').where('server_uuid', '=', server.uuid).where('deleted_at', 'is', null);
  const users = [probe.databaseUser?.toLowerCase(), 'phpmyadmin'].filter((u): u is string => !!u);
  const [user, domain, special, databases, dbUsers] = await Promise.all([
    ids.serverUser
      ? trx
          .selectFrom('server_users')
          .select('uuid')
          .where('uuid', '=', ids.serverUser)
          .where('server_uuid', '=', server.uuid)
          .executeTakeFirst()
      : undefined,
    probe.domain ? live().select('domain').where('domain', '=', probe.domain).executeTakeFirst() : undefined,
    // Ports (for allocation) and one-per-server types: few rows per server.
    live()
      .select(['port', 'singleton_type'])
      .where((eb) => eb.or([eb('port', 'is not', null), eb('singleton_type', 'is not', null)]))
      .execute(),
    probe.database
      ? trx
          .selectFrom('server_databases')
          .select('name_key')
          .where('server_uuid', '=', server.uuid)
          .where('name_key', '=', probe.database.toLowerCase())
          .execute()
      : [],
    trx
      .selectFrom('server_database_users')
      .select('name_key')
      .where('server_uuid', '=', server.uuid)
      .where('name_key', 'in', users)
      .execute(),
  ]);
  if (domain) taken.domains.add(domain.domain);
  for (const s of special) {
    if (s.port !== null) taken.ports.add(s.port);
    if (s.singleton_type) taken.singletonTypes.add(s.singleton_type as SiteTypeId);
  }
  for (const d of databases) taken.databases.add(d.name_key);
  for (const u of dbUsers) taken.databaseUsers.add(u.name_key);
  return { server: { uuid: server.uuid, facts: server.facts }, serverUserExists: !!user, dnsProfile, taken };
}
