import { randomInt } from 'node:crypto';
import { SITE_TYPES } from '@siteplane/contract';
import type { Actor } from '../../domain/auth/actor.js';
import { ValidationError } from '../../domain/field-errors.js';
import { withEngine } from '../../domain/servers/facts.js';
import type { SitePlan } from '../../domain/sites/create-site-input.js';
import { freeDomainLabel, freeDomainName } from '../../domain/sites/free-domain.js';
import { referencedIds, requestedNames, validateCreateSite } from '../../domain/sites/validate-create-site.js';
import { announceEvents, recordEvent } from '../../storage/event-log.js';
import { insertRow } from '../../storage/insert-row.js';
import { loadCreateContext, lockServer, type ServerRow } from '../../storage/site-context.js';
import { timeOrderedUuid } from '../../storage/time-ordered-uuid.js';
import { uniqueViolation } from '../../storage/unique-violation.js';
import type { UseCaseDeps } from '../deps.js';
import { enqueueOperation } from '../operations/enqueue-operation.js';
import { assertWithinQuota } from '../quotas.js';
import { generatedDatabaseName, generatedDatabaseUser, generatedPassword } from './generate-names.js';
import { type SiteRecord, siteRecord } from './site-record.js';

export interface CreatedSite {
  record: SiteRecord;
  /** Returned once, in the 202 body, when Siteplane generated it. */
  generatedDatabasePassword: string | null;
}

/** POST /api/v1/sites: validate every rule, then commit the site, its operation and its job together. */
export async function createSite(deps: UseCaseDeps, actor: Actor, body: unknown): Promise<CreatedSite> {
  const ids = referencedIds(body);
  try {
    const result = await deps.writes(async (trx) => {
      const server = ids.server ? await lockServer(trx, deps.dialect, ids.server, actor) : null;
      const ctx = {
        ...(await loadCreateContext(trx, server, ids, actor, requestedNames(body))),
        engines: deps.databaseEngines,
        phpSource: deps.phpSource,
      };
      const plan = validateCreateSite(body, ctx);
      await assertWithinQuota(trx, deps.dialect, deps.quotas, (server as ServerRow).team_uuid, 'sites');
      const now = deps.clock.now().toISOString();
      const site = materialise(plan, server as ServerRow, deps.freeDomainBase, ctx.taken.ports);
      const secrets = {
        ...plan.secrets,
        databasePassword: plan.secrets.databasePassword ?? (plan.database ? generatedPassword() : undefined),
      };
      const row = {
        uuid: timeOrderedUuid(),
        team_uuid: (server as ServerRow).team_uuid,
        server_uuid: plan.server,
        server_user_uuid: plan.serverUser,
        type: plan.type,
        domain: site.domain,
        free_domain: plan.freeDomain ? 1 : 0,
        free_domain_base: plan.freeDomain ? deps.freeDomainBase : null,
        status: 'pending',
        ssl: JSON.stringify({
          enabled: plan.ssl.enabled,
          provider: plan.ssl.provider,
          email: plan.ssl.email,
          wildcard: plan.ssl.wildcard,
          include_www: plan.ssl.includeWww,
          dns_profile: plan.ssl.dnsProfile,
          status: plan.ssl.enabled ? 'pending' : 'none',
          expires_at: null,
          error: null,
        }),
        supports_livewire: plan.supportsLivewire ? 1 : 0,
        options: JSON.stringify(plan.options),
        runtime: JSON.stringify(plan.runtime),
        // Nothing to seal for most sites (no database, no WordPress admin): no cipher work then.
        secrets_enc: Object.values(secrets).some((v) => v !== undefined) ? deps.secrets.sealJson(secrets) : null,
        db_engine: plan.database?.engine ?? null,
        db_name: site.databaseName,
        db_user: site.databaseUser,
        db_create: plan.database?.createDatabase ? 1 : 0,
        db_install_engine: plan.database?.installEngine ? 1 : 0,
        db_sha2: plan.database?.useCachingSha2Password ? 1 : 0,
        port: site.port,
        singleton_type: SITE_TYPES[plan.type].onePerServer ? plan.type : null,
        failure: null,
        created_at: now,
        updated_at: now,
        deleted_at: null,
      };
      await insertRow(trx, 'sites', row);
      if (plan.database && site.databaseUser) {
        if (site.databaseName) {
          await trx
            .insertInto('server_databases')
            .values({
              server_uuid: plan.server,
              name_key: site.databaseName.toLowerCase(),
              name: site.databaseName,
              engine: plan.database.engine,
              site_uuid: row.uuid,
              created_at: now,
            })
            .execute();
        }
        await trx
          .insertInto('server_database_users')
          .values({
            server_uuid: plan.server,
            name_key: site.databaseUser.toLowerCase(),
            name: site.databaseUser,
            engine: plan.database.engine,
            site_uuid: row.uuid,
            created_at: now,
          })
          .execute();
        if (plan.database.installEngine) {
          // The engine is the server's from now on: a later create sees it (rule 5) even before it is installed.
          const facts = withEngine((server as ServerRow).facts, plan.database.engine);
          await trx
            .updateTable('servers')
            .set({ facts: JSON.stringify(facts), updated_at: now })
            .where('uuid', '=', plan.server)
            .execute();
        }
      }
      const operation = await enqueueOperation(trx, { site: row, kind: 'create', params: {}, now });
      await recordEvent(trx, {
        team: row.team_uuid,
        type: 'site.created',
        subject: row.uuid,
        data: { site: row.uuid, server: row.server_uuid, type: row.type, domain: row.domain, operation: operation.uuid },
        now,
      });
      return {
        record: siteRecord(row, operation),
        team: row.team_uuid,
        generatedDatabasePassword: plan.database && !plan.secrets.databasePassword ? (secrets.databasePassword as string) : null,
      };
    });
    deps.siteLists.invalidate(result.record.server);
    announceEvents(deps.changes, result.team);
    deps.jobEnqueued();
    return { record: result.record, generatedDatabasePassword: result.generatedDatabasePassword };
  } catch (error) {
    throw translateUniqueViolation(error);
  }
}

interface Materialised {
  domain: string;
  databaseName: string | null;
  databaseUser: string | null;
  port: number | null;
}

function materialise(plan: SitePlan, server: ServerRow, freeDomainBase: string, takenPorts: ReadonlySet<number>): Materialised {
  const domain = plan.domain ?? freeDomainName(freeDomainLabel(randomInt), freeDomainBase, server.ip);
  const db = plan.database;
  return {
    domain,
    databaseName: db?.createDatabase ? (db.name ?? generatedDatabaseName(plan.type)) : null,
    databaseUser: db ? (db.user ?? generatedDatabaseUser(plan.type)) : null,
    port: sitePort(plan, takenPorts),
  };
}

/** Node processes, Soketi and Generic Port sites listen on a port of their own, proxied by nginx. */
function sitePort(plan: SitePlan, taken: ReadonlySet<number>): number | null {
  if (plan.type === 'generic-port') return plan.options.port as number;
  const runtime = SITE_TYPES[plan.type].runtime;
  if (runtime !== 'node' || plan.type === 'nuxt-static' || plan.type === 'nodejs-static') return null;
  let port = plan.type === 'soketi' ? 6001 : 3001;
  while (taken.has(port)) port++;
  return port;
}

const UNIQUE_FIELDS: [
  RegExp,
  string,
  'domain_taken' | 'one_per_server' | 'port_taken' | 'database_taken' | 'database_user_taken',
][] = [
  [/domain/, 'domain', 'domain_taken'],
  [/singleton/, 'type', 'one_per_server'],
  [/port/, 'options.port', 'port_taken'],
  [/server_database_users/, 'options.databaseUser', 'database_user_taken'],
  [/server_databases/, 'options.database', 'database_taken'],
];

/** A unique index lost a race that the pre-check could not see: report it like the pre-check would. */
function translateUniqueViolation(error: unknown): unknown {
  const which = uniqueViolation(error);
  if (!which) return error;
  for (const [pattern, field, code] of UNIQUE_FIELDS) {
    if (pattern.test(which)) return new ValidationError([{ field, code, message: `Taken on this server (${code}).` }]);
  }
  return error;
}
