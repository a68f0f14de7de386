import type { SiteTypeId } from '@siteplane/contract';
import { type Kysely, sql } from 'kysely';
import type { Actor } from '../domain/auth/actor.js';
import { EMPTY_FACTS, type ServerFacts } from '../domain/servers/facts.js';
import type { CreateSiteContext } from '../domain/sites/create-site-context.js';
import type { Dialect } from './database.js';
import { selectPerShape } from './query-per-shape.js';
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
  dialect: Dialect,
  serverUuid: string,
  actor: Actor,
): Promise<ServerRow | null> {
  const build = () => {
    const query = trx
      .selectFrom('servers')
      .select(['uuid', 'team_uuid', 'ip', 'connection', 'facts'])
      .where('uuid', '=', serverUuid)
      .where('deleted_at', 'is', null)
      .where('team_uuid', 'in', actor.teamUuids);
    return dialect === 'postgres' ? query.forUpdate() : query;
  };
  const [row] = await selectPerShape(
    trx,
    `lockServer ${dialect} ${actor.teamUuids.length}`,
    [serverUuid, ...actor.teamUuids],
    build,
  );
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
  const serverUuid = server.uuid;
  const users = [probe.databaseUser?.toLowerCase(), 'phpmyadmin'].filter((u): u is string => !!u);
  const kind = (name: string) => sql<string>`${sql.lit(name)}`.as('kind');
  const live = () => trx.selectFrom('sites').where('server_uuid', '=', serverUuid).where('deleted_at', 'is', null);
  // Everything the rules must know is taken on the server, in one round trip: each part is a point
  // lookup or a read of a small partial index (sites_port_live, sites_singleton_live).
  const build = () => {
    let query = live()
      .select([kind('port'), sql<string | null>`cast(port as text)`.as('value')])
      .where('port', 'is not', null)
      .unionAll(
        live()
          .select([kind('singleton'), 'singleton_type as value'])
          .where('singleton_type', 'is not', null),
      )
      .unionAll(
        trx
          .selectFrom('server_database_users')
          .select([kind('database_user'), 'name_key as value'])
          .where('server_uuid', '=', serverUuid)
          .where('name_key', 'in', users),
      );
    if (ids.serverUser) {
      query = query.unionAll(
        trx
          .selectFrom('server_users')
          .select([kind('server_user'), 'uuid as value'])
          .where('uuid', '=', ids.serverUser)
          .where('server_uuid', '=', serverUuid),
      );
    }
    if (probe.domain)
      query = query.unionAll(
        live()
          .select([kind('domain'), 'domain as value'])
          .where('domain', '=', probe.domain),
      );
    if (probe.database) {
      query = query.unionAll(
        trx
          .selectFrom('server_databases')
          .select([kind('database'), 'name_key as value'])
          .where('server_uuid', '=', serverUuid)
          .where('name_key', '=', probe.database.toLowerCase()),
      );
    }
    return query;
  };
  // The values in the order the parts above take them.
  const parameters = [
    serverUuid,
    serverUuid,
    serverUuid,
    ...users,
    ...(ids.serverUser ? [ids.serverUser, serverUuid] : []),
    ...(probe.domain ? [serverUuid, probe.domain] : []),
    ...(probe.database ? [serverUuid, probe.database.toLowerCase()] : []),
  ];
  const shape = `createContext ${users.length} ${!!ids.serverUser} ${!!probe.domain} ${!!probe.database}`;
  let user = false;
  for (const row of await selectPerShape(trx, shape, parameters, build)) {
    const value = row.value as string;
    if (row.kind === 'port') taken.ports.add(Number(value));
    else if (row.kind === 'singleton') taken.singletonTypes.add(value as SiteTypeId);
    else if (row.kind === 'database_user') taken.databaseUsers.add(value);
    else if (row.kind === 'server_user') user = true;
    else if (row.kind === 'domain') taken.domains.add(value);
    else if (row.kind === 'database') taken.databases.add(value);
  }
  return { server: { uuid: server.uuid, facts: server.facts }, serverUserExists: user, dnsProfile, taken };
}

/**
 * The actor's live site for a change (delete, retry, certificate retry), locked `FOR UPDATE` on
 * PostgreSQL so two changes of one site serialise (SQLite's single writer does that already);
 * undefined when it does not exist, is deleted, or is another tenant's.
 */
export function lockLiveSite(trx: Kysely<Database>, dialect: Dialect, uuid: string, actor: Actor) {
  const query = trx
    .selectFrom('sites')
    .selectAll()
    .where('uuid', '=', uuid.toLowerCase())
    .where('deleted_at', 'is', null)
    .where('team_uuid', 'in', actor.teamUuids);
  return (dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
}
