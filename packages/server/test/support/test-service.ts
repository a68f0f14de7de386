import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SiteTypeId } from '@siteplane/contract';
import pg from 'pg';
import pino from 'pino';
import { buildService, type Service, type ServiceOverrides } from '../../src/app/build-service.js';
import { loadConfig } from '../../src/app/config.js';
import type { ResponseMismatch } from '../../src/http/response-check.js';
import type { LedgerEntry, ProvisionedSite, Recipe, Step, StepContext } from '../../src/provisioning/step.js';
import { createToken } from '../../src/storage/tokens.js';

/** Which database the suite runs on: SQLite by default, PostgreSQL when SITEPLANE_TEST_DB=postgres. */
export const TEST_DB = process.env.SITEPLANE_TEST_DB === 'postgres' ? 'postgres' : 'sqlite';
const PG_ADMIN = process.env.SITEPLANE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * SITEPLANE_ALLOWED_TARGETS for suites whose targets are on this machine (stand-ins, git daemons,
 * the test sshd on 127.0.0.1): loopback is refused unless listed, so they list it, with the defaults.
 */
export const LOOPBACK_TARGETS = '127.0.0.0/8,::1/128,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7';

export interface TestService extends Service {
  secretKey: string;
  token: string;
  readToken: string;
  otherTenantToken: string;
  /** The PostgreSQL database of this service (null on SQLite): another service or process may open it too (`sameDatabaseAs`). */
  databaseUrl: string | null;
  stop(): Promise<void>;
}

/** A fresh service on a fresh database (a new SQLite dir or a new PostgreSQL database per call). */
export async function startTestService(
  overrides: ServiceOverrides & { env?: Record<string, string>; sameDatabaseAs?: TestService } = {},
): Promise<TestService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'siteplane-test-'));
  let dbName: string | null = null;
  let databaseUrl: string | undefined = overrides.sameDatabaseAs?.databaseUrl ?? undefined;
  const secretKey = overrides.sameDatabaseAs?.secretKey ?? randomBytes(32).toString('base64');
  if (overrides.sameDatabaseAs && !databaseUrl) throw new Error('sameDatabaseAs: only on PostgreSQL');
  if (TEST_DB === 'postgres' && !databaseUrl) {
    dbName = `sp_test_${randomBytes(6).toString('hex')}`;
    const admin = new pg.Client({ connectionString: PG_ADMIN });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    await admin.end();
    databaseUrl = PG_ADMIN.replace(/\/[^/]*$/, `/${dbName}`);
  }
  const config = loadConfig({
    SITEPLANE_DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    SITEPLANE_SECRET_KEY: secretKey,
    LOG_LEVEL: 'silent',
    // Suites make thousands of requests with one token; the rate-limit suite sets its own.
    SITEPLANE_RATE_LIMIT: '0',
    SITEPLANE_RATE_LIMIT_ADDRESS: '0',
    ...overrides.env,
  });
  // Every answer of every HTTP test is checked against the schema its route documents.
  const mismatches: ResponseMismatch[] = [];
  const service = await buildService(config, {
    logger: pino({ level: 'silent' }),
    recipes: overrides.recipes ?? fakeRecipes(),
    pollMs: 50,
    responseMismatch: (m) => mismatches.push(m),
    ...overrides,
  });
  const shared = overrides.sameDatabaseAs;
  const token = shared?.token ?? (await createToken(service.storage.db, { name: 'test', scope: 'write' })).token;
  const readToken = shared?.readToken ?? (await createToken(service.storage.db, { name: 'reader', scope: 'read' })).token;
  const otherTenantToken =
    shared?.otherTenantToken ??
    (await createToken(service.storage.db, { name: 'other', scope: 'write', account: 'other-tenant' })).token;
  return {
    ...service,
    secretKey,
    token,
    readToken,
    otherTenantToken,
    databaseUrl: databaseUrl ?? null,
    async stop() {
      await service.close();
      rmSync(dataDir, { recursive: true, force: true });
      if (dbName) {
        const admin = new pg.Client({ connectionString: PG_ADMIN });
        await admin.connect();
        await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
        await admin.end();
      }
      // After the cleanup: a mismatch fails the suite that made the request.
      if (mismatches.length)
        throw new Error(
          `answers that do not match their documented schema:\n${mismatches.map((m) => `${m.method} ${m.url} ${m.status} (${m.operationId}): ${m.errors.map((e) => `${e.field || '(body)'} ${e.code} ${e.message}`).join('; ')}`).join('\n')}`,
        );
    },
  };
}

export interface FakeRecipeOptions {
  /** Every step whose name contains this fails ('nginx': `ensure nginx vhost`; 'remove': the delete step). */
  failAt?: string;
  /** With failAt: the step fails only the first n times it runs for a site (a cause fixed in between). */
  failTimes?: number;
  /** `ensure nginx vhost` waits for it. */
  gate?: Promise<void>;
}

/**
 * Recipes for core tests: a few real-looking commands per site, each recorded by the dry-run
 * executor, with ledger entries so deletion has something to walk. Like real steps they check
 * before they change — here against the ledger, the dry-run server's only memory — so a retried
 * create shows which steps found their work done.
 */
export function fakeRecipes(extra: FakeRecipeOptions = {}): (type: SiteTypeId) => Recipe {
  const runs = new Map<string, number>();
  // Fails before the step changes anything, as a real step whose first command failed.
  const step = (site: ProvisionedSite, name: string, run: Step['run']): Step => ({
    name,
    async run(ctx) {
      if (extra.failAt && name.includes(extra.failAt)) {
        const key = `${site.uuid} ${name}`;
        const before = runs.get(key) ?? 0;
        runs.set(key, before + 1);
        if (extra.failTimes === undefined || before < extra.failTimes) throw new Error(`${name} failed (run ${before + 1})`);
      }
      await run(ctx);
    },
  });
  const ensure = (site: ProvisionedSite, name: string, entry: LedgerEntry, change: (ctx: StepContext) => Promise<void>) =>
    step(site, name, async (ctx) => {
      if ((await ctx.ledger.list()).some((e) => e.kind === entry.kind && e.ref === entry.ref)) {
        ctx.log(`${entry.kind} ${entry.ref} is in place; left as it is`);
        return;
      }
      await change(ctx);
      await ctx.ledger.record(entry);
    });
  return (type) => ({
    type,
    create: (site) => [
      ensure(site, 'ensure site directory', { kind: 'directory', ref: `/home/${site.user}/${site.domain}` }, async (ctx) => {
        await ctx.exec.run(['mkdir', '-p', `/home/${site.user}/${site.domain}`]);
      }),
      ensure(site, 'ensure nginx vhost', { kind: 'nginx_vhost', ref: `${site.domain}.conf` }, async (ctx) => {
        if (extra.gate) await extra.gate;
        await ctx.exec.run(['tee', `/etc/nginx/sites-available/${site.domain}.conf`], { stdin: 'server {}' });
      }),
      ...(site.database
        ? [
            ensure(site, 'ensure database and user', { kind: 'database', ref: site.database.name ?? '' }, async (ctx) => {
              await ctx.exec.run(['mysql'], {
                stdin: `CREATE USER '${site.database?.user}' IDENTIFIED BY '${site.database?.password}'`,
              });
              ctx.log(`created user ${site.database?.user} with password ${site.database?.password}`);
            }),
          ]
        : []),
    ],
    remove: (site, options) => [
      step(site, 'remove what the ledger lists', async (ctx) => {
        for (const entry of (await ctx.ledger.list()).reverse()) {
          if (entry.kind === 'database' && !options.deleteDatabase) continue;
          await ctx.exec.run(['rm', '-rf', entry.ref]);
          await ctx.ledger.forget(entry);
        }
      }),
    ],
  });
}

/** Registers a dry-run server with declared facts and a user; returns their uuids. */
export async function seedServer(s: TestService, facts: Record<string, unknown> = {}, token = s.token) {
  const server = await s.app.inject({
    method: 'POST',
    url: '/api/v1/servers',
    headers: { authorization: `Bearer ${token}` },
    payload: {
      name: 'web-1',
      ip: '127.0.0.1',
      connection: 'dry-run',
      facts: { os: 'Debian 12', php: ['8.2'], node: null, mysql: null, postgresql: null, ...facts },
    },
  });
  if (server.statusCode !== 201) throw new Error(`server: ${server.body}`);
  const serverUuid = server.json().uuid as string;
  const user = await s.app.inject({
    method: 'POST',
    url: `/api/v1/servers/${serverUuid}/users`,
    headers: { authorization: `Bearer ${token}` },
    payload: { username: 'deploy' },
  });
  if (user.statusCode !== 201) throw new Error(`user: ${user.body}`);
  return { server: serverUuid, serverUser: user.json().uuid as string };
}

/** Polls a site until its status is one of `states`. */
export async function waitForStatus(
  s: TestService,
  uuid: string,
  states: string[],
  timeoutMs = 10_000,
): Promise<Record<string, unknown>> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await s.app.inject({
      method: 'GET',
      url: `/api/v1/sites/${uuid}`,
      headers: { authorization: `Bearer ${s.token}` },
    });
    const body = res.statusCode === 404 ? { status: 'gone' } : (res.json() as Record<string, unknown>);
    if (states.includes(String(body.status))) return body;
    if (Date.now() > until) throw new Error(`site ${uuid} stayed ${String(body.status)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
