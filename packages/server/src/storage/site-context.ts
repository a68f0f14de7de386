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

/** What the create rules must know of the server: its facts and everything already taken on it. */
export async function loadCreateContext(
  trx: Kysely<Database>,
  server: ServerRow | null,
  ids: { serverUser?: string; dnsProfile?: string },
  actor: Actor,
): Promise<CreateSiteContext> {
  const empty = {
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
  if (!server) return { server: null, serverUserExists: false, dnsProfile, taken: empty };
  const [user, sites, databases, users] = await Promise.all([
    ids.serverUser
      ? trx
          .selectFrom('server_users')
          .select('uuid')
          .where('uuid', '=', ids.serverUser)
          .where('server_uuid', '=', server.uuid)
          .executeTakeFirst()
      : undefined,
    trx
      .selectFrom('sites')
      .select(['domain', 'port', 'singleton_type'])
      .where('server_uuid', '=', server.uuid)
      .where('deleted_at', 'is', null)
      .execute(),
    trx.selectFrom('server_databases').select('name_key').where('server_uuid', '=', server.uuid).execute(),
    trx.selectFrom('server_database_users').select('name_key').where('server_uuid', '=', server.uuid).execute(),
  ]);
  for (const s of sites) {
    empty.domains.add(s.domain);
    if (s.port !== null) empty.ports.add(s.port);
    if (s.singleton_type) empty.singletonTypes.add(s.singleton_type as SiteTypeId);
  }
  for (const d of databases) empty.databases.add(d.name_key);
  for (const u of users) empty.databaseUsers.add(u.name_key);
  return { server: { uuid: server.uuid, facts: server.facts }, serverUserExists: !!user, dnsProfile, taken: empty };
}
