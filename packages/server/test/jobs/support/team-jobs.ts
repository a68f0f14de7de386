import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../../src/storage/schema.js';
import { timeOrderedUuid } from '../../../src/storage/time-ordered-uuid.js';
import { enqueueOperation } from '../../../src/use-cases/operations/enqueue-operation.js';

export interface SeededTeam {
  team: string;
  server: string;
  serverUser: string;
}

/** A team of its own account, with one dry-run server and one user on it; rows written directly. */
export async function seedTeam(db: Kysely<Database>, name: string): Promise<SeededTeam> {
  const at = new Date().toISOString();
  const account = randomUUID();
  const team = randomUUID();
  const server = randomUUID();
  const serverUser = randomUUID();
  await db
    .insertInto('accounts')
    .values({ uuid: account, name: `${name}-${account}`, created_at: at })
    .execute();
  await db.insertInto('teams').values({ uuid: team, account_uuid: account, name, created_at: at }).execute();
  await db
    .insertInto('servers')
    .values({
      uuid: server,
      team_uuid: team,
      name: `${name}-web`,
      ip: '127.0.0.1',
      connection: 'dry-run',
      ssh_port: 22,
      ssh_user: 'root',
      public_key: null,
      private_key_enc: null,
      host_key_sha256: null,
      facts: '{}',
      facts_source: 'declared',
      facts_at: null,
      status: 'verified',
      created_at: at,
      updated_at: at,
      deleted_at: null,
    })
    .execute();
  await db
    .insertInto('server_users')
    .values({ uuid: serverUser, server_uuid: server, username: 'deploy', created_at: at })
    .execute();
  return { team, server, serverUser };
}

/**
 * `sites` new sites of the team, each with `jobsPerSite` queued jobs (site, operation and job rows
 * written in bulk, as enqueueOperation writes them). `at(i)` is the i-th job's run_at and created_at,
 * in enqueue order (site by site). Returns the site uuids.
 */
export async function enqueueTeamJobs(
  db: Kysely<Database>,
  t: SeededTeam,
  options: {
    sites: number;
    jobsPerSite?: number;
    at: (i: number) => string;
    /** Job rows as written before migration 007: without team_uuid. */
    beforeFairClaimMigration?: boolean;
  },
): Promise<string[]> {
  const perSite = options.jobsPerSite ?? 1;
  const sites: Database['sites'][] = [];
  const operations: Database['operations'][] = [];
  const jobs: Database['jobs'][] = [];
  for (let s = 0; s < options.sites; s++) {
    const site = randomUUID();
    const created = options.at(s * perSite);
    sites.push(siteRow(t, site, created));
    for (let k = 0; k < perSite; k++) {
      const at = options.at(s * perSite + k);
      const operation = timeOrderedUuid();
      operations.push({
        uuid: operation,
        site_uuid: site,
        team_uuid: t.team,
        kind: 'create',
        status: 'queued',
        params: '{}',
        error: null,
        created_at: at,
        started_at: null,
        finished_at: null,
      });
      jobs.push({
        uuid: timeOrderedUuid(),
        operation_uuid: operation,
        site_uuid: site,
        kind: 'site.create',
        status: 'queued',
        attempts: 0,
        max_attempts: 5,
        run_at: at,
        lease_until: null,
        locked_by: null,
        last_error: null,
        created_at: at,
        ...(options.beforeFairClaimMigration ? {} : { team_uuid: t.team }),
      } as Database['jobs']);
    }
  }
  await db.transaction().execute(async (trx) => {
    for (const [table, rows] of [
      ['sites', sites],
      ['operations', operations],
      ['jobs', jobs],
    ] as const) {
      // PostgreSQL takes at most 65,535 parameters a statement; SQLite 32,766.
      for (let i = 0; i < rows.length; i += 500)
        await trx
          .insertInto(table)
          .values(rows.slice(i, i + 500))
          .execute();
    }
  });
  return sites.map((s) => s.uuid);
}

/** One site of the team with one job, through the service's own enqueue (enqueueOperation). */
export async function enqueueOneSiteJob(db: Kysely<Database>, t: SeededTeam, at: string): Promise<string> {
  const site = randomUUID();
  await db.transaction().execute(async (trx) => {
    await trx
      .insertInto('sites')
      .values(siteRow(t, site, at))
      .execute();
    await enqueueOperation(trx, { site: { uuid: site, team_uuid: t.team }, kind: 'create', params: {}, now: at });
  });
  return site;
}

function siteRow(t: SeededTeam, uuid: string, at: string): Database['sites'] {
  return {
    uuid,
    team_uuid: t.team,
    server_uuid: t.server,
    server_user_uuid: t.serverUser,
    type: 'static-html',
    domain: `${uuid}.example.com`,
    free_domain: 0,
    free_domain_base: null,
    status: 'queued',
    ssl: 'none',
    supports_livewire: 0,
    options: '{}',
    runtime: '{}',
    secrets_enc: null,
    db_engine: null,
    db_name: null,
    db_user: null,
    db_create: 0,
    db_install_engine: 0,
    db_sha2: 0,
    port: null,
    singleton_type: null,
    failure: null,
    created_at: at,
    updated_at: at,
    deleted_at: null,
  };
}
