// Issue 10 items 5 and 11 without a real CA: every temporary name in the operator's zone gets its
// own certificate, so its orders spend the zone's budget at the CA. The zone's weekly budget, the
// team's share of it, the per-name retry limit (the CA's failed validations per hour and its
// Retry-After), deferral to the renewal scheduler, and POST …/ssl answering 429 with Retry-After.
// The CA is a stand-in that refuses accounts (or rate-limits them): an order that gets that far
// fails at once, which is what the per-name limit counts; an order held back never reaches it.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FreeZoneIssuances } from '../../src/use-cases/ssl/free-zone-issuances.js';
import { startCloudflareStandin } from '../standins/dns/cloudflare.js';
import type { DnsStandin } from '../standins/dns/standin-server.js';
import { LOOPBACK_TARGETS, seedServer, startTestService, TEST_DB, type TestService } from '../support/test-service.js';
import { type AccountAnswer, type FakeCa, makeTestCa, startFakeCa } from './fake-ca.js';
import { authOf, createSite, getSite, movableClock, recordingExecutor, settle, waitForOperation } from './support.js';

const ZONE = 'free.example.net';
const DAY = 86_400_000;
const REFUSE: AccountAnswer = {
  status: 403,
  body: { type: 'urn:ietf:params:acme:error:unauthorized', detail: 'test CA refuses accounts', status: 403 },
};
const RATE_LIMITED: AccountAnswer = {
  status: 429,
  headers: { 'Retry-After': '1800' },
  body: { type: 'urn:ietf:params:acme:error:rateLimited', detail: 'too many new accounts', status: 429 },
};

interface Zone {
  s: TestService;
  ca: FakeCa;
  cf: DnsStandin<{ apiToken: string }>;
  ids: { server: string; serverUser: string };
  team: string;
  clock: ReturnType<typeof movableClock>;
  answer: { current: AccountAnswer };
  stop(): Promise<void>;
}

async function startZone(env: Record<string, string> = {}): Promise<Zone> {
  const profile = randomUUID();
  const cf = await startCloudflareStandin({ zones: [ZONE] });
  const testCa = makeTestCa();
  const answer = { current: REFUSE };
  const ca = await startFakeCa(testCa, () => answer.current);
  const clock = movableClock();
  const s = await startTestService({
    clock,
    renewalIntervalMs: 3_600_000,
    env: {
      CLOUDFLARE_API_BASE: cf.url,
      ACME_DIRECTORY_LETSENCRYPT: ca.directoryUrl,
      ACME_CA_CERTS: testCa.caPem,
      FREE_DOMAIN_ZONE: ZONE,
      FREE_DOMAIN_DNS_PROFILE: profile,
      SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS,
      ...env,
    },
    executorFor: async () => recordingExecutor(),
  });
  const ids = await seedServer(s);
  const team = (
    await s.storage.db.selectFrom('servers').select('team_uuid').where('uuid', '=', ids.server).executeTakeFirstOrThrow()
  ).team_uuid;
  await s.storage.db
    .insertInto('dns_profiles')
    .values({
      uuid: profile,
      team_uuid: team,
      provider: 'cloudflare',
      name: 'operator zone',
      credentials_enc: s.useCases.secrets.sealJson(cf.credentials),
      verified_at: null,
      created_at: new Date().toISOString(),
    })
    .execute();
  return {
    s,
    ca,
    cf,
    ids,
    team,
    clock,
    answer,
    async stop() {
      await s.stop();
      await cf.close();
      await ca.close();
    },
  };
}

/** Certificates the zone already got this week, as other sites' orders left them. */
async function spent(z: Zone, team: string, count: number, at: Date): Promise<void> {
  for (let i = 0; i < count; i++) {
    await z.s.storage.db
      .insertInto('free_domain_issuances')
      .values({
        uuid: randomUUID(),
        zone: ZONE,
        name: `earlier${i}.${ZONE}`,
        team_uuid: team,
        site_uuid: randomUUID(),
        renewal: 0,
        outcome: 'issued',
        retry_after: null,
        created_at: new Date(at.getTime() + i * 1000).toISOString(),
        updated_at: at.toISOString(),
      })
      .execute();
  }
}

const temporarySite = (z: Zone) => createSite(z.s, { ...z.ids, type: 'static-html', freeDomain: true, options: {} });
const postSsl = (z: Zone, uuid: string) =>
  z.s.app.inject({ method: 'POST', url: `/api/v1/sites/${uuid}/ssl`, headers: authOf(z.s) });
const accountRequests = (z: Zone) => z.ca.requests.filter((r) => r === 'POST /acct').length;

describe(`the zone's weekly budget and the team's share (${TEST_DB})`, () => {
  let z: Zone;
  beforeAll(async () => {
    z = await startZone({ FREE_DOMAIN_CERTIFICATES_PER_WEEK: '3', FREE_DOMAIN_TEAM_CERTIFICATES_PER_WEEK: '2' });
  });
  afterAll(async () => z?.stop());

  it('budget spent by other teams: the site installs, ssl says why and when, POST …/ssl is a 429, the scheduler orders it then', async () => {
    const firstSpent = new Date(Date.now() - DAY);
    await spent(z, 'another-team', 3, firstSpent);
    const created = await temporarySite(z);
    const uuid = created.uuid as string;
    const op = await waitForOperation(z.s, uuid, 'ssl');
    expect(op.status).toBe('failed');
    const retryAt = new Date(firstSpent.getTime() + 7 * DAY).toISOString();
    const site = await getSite(z.s, uuid);
    expect(site.status).toBe('installed');
    expect(site.ssl).toMatchObject({
      status: 'failed',
      error: { code: 'zone_certificates_exhausted', retry_at: retryAt, operation: op.uuid },
    });
    expect(site.ssl.error.message).toContain('FREE_DOMAIN_CERTIFICATES_PER_WEEK = 3');
    // Held back before the CA was asked; the A record is there, the site serves HTTP.
    expect(z.ca.requests).toEqual([]);
    expect(
      z.cf
        .records()
        .filter((r) => r.type === 'A')
        .map((r) => r.name),
    ).toEqual([site.domain]);

    const retry = await postSsl(z, uuid);
    expect(retry.statusCode).toBe(429);
    expect(retry.headers['content-type']).toContain('application/problem+json');
    expect(retry.json()).toMatchObject({ status: 429, code: 'zone_certificates_exhausted' });
    expect(retry.json().detail).toContain(`after ${retryAt}`);
    const wait = Number(retry.headers['retry-after']);
    expect(wait).toBeGreaterThan(6 * 86_400 - 60);
    expect(wait).toBeLessThanOrEqual(6 * 86_400 + 60);
    expect((await getSite(z.s, uuid)).operation.uuid).toBe(op.uuid);

    // The renewal scheduler leaves it until then, and queues it once the oldest counted certificate is a week old.
    await settle(z.s);
    expect(await z.s.renewals?.tick()).not.toContain(uuid);
    z.clock.set(new Date(Date.parse(retryAt) - 1000));
    expect(await z.s.renewals?.tick()).not.toContain(uuid);
    z.clock.set(new Date(Date.parse(retryAt) + 1000));
    expect(await z.s.renewals?.tick()).toEqual([uuid]);
    const next = await waitForOperation(z.s, uuid, 'ssl');
    expect(next.uuid).not.toBe(op.uuid);
    // This time the order was placed (and the stand-in CA refused the account).
    expect(accountRequests(z)).toBe(1);
    expect((await getSite(z.s, uuid)).ssl.error).toMatchObject({ code: 'account_failed' });
    const mine = await z.s.storage.db.selectFrom('free_domain_issuances').selectAll().where('site_uuid', '=', uuid).execute();
    expect(mine).toEqual([expect.objectContaining({ name: site.domain, team_uuid: z.team, outcome: 'failed', renewal: 0 })]);
    // Not deferred: a failure that is no limit waits for the user (or the next renewal).
    await settle(z.s);
    expect(await z.s.renewals?.tick()).not.toContain(uuid);
  });

  it("the team's share spent: held back although the zone has room; a deleted site gives nothing back", async () => {
    await settle(z.s);
    const now = z.clock.now();
    await spent(z, z.team, 2, new Date(now.getTime() - DAY));
    const gone = await temporarySite(z);
    await waitForOperation(z.s, gone.uuid as string, 'ssl');
    expect((await getSite(z.s, gone.uuid as string)).ssl.error).toMatchObject({
      code: 'team_certificates_exhausted',
      retry_at: new Date(now.getTime() - DAY + 7 * DAY).toISOString(),
    });
    const del = await z.s.app.inject({ method: 'DELETE', url: `/api/v1/sites/${gone.uuid}`, headers: authOf(z.s) });
    expect(del.statusCode).toBe(202);
    await settle(z.s);
    const again = await temporarySite(z);
    await waitForOperation(z.s, again.uuid as string, 'ssl');
    expect((await getSite(z.s, again.uuid as string)).ssl.error).toMatchObject({ code: 'team_certificates_exhausted' });
    expect(accountRequests(z)).toBe(1);
  });

  it('two orders at once for the last place: one is recorded, the other held back (the zone is locked while counting)', async () => {
    await settle(z.s);
    const issuances = new FreeZoneIssuances(z.s.storage.db, z.s.storage.dialect, { perWeek: 1, perTeamPerWeek: 0 });
    const zone = `race-${randomUUID().slice(0, 8)}.example.net`;
    const results = await Promise.allSettled(
      ['a', 'b', 'c', 'd'].map((label) =>
        issuances.reserve({ zone, team: 't', site: randomUUID(), name: `${label}.${zone}`, renewal: false }, new Date()),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results.filter((r) => r.status === 'rejected')) {
      expect((r as PromiseRejectedResult).reason).toMatchObject({ kind: 'zone_certificates_exhausted' });
    }
  });
});

describe(`per-name retry limit and the CA's rate limit (${TEST_DB})`, () => {
  let z: Zone;
  beforeAll(async () => {
    z = await startZone();
  });
  afterAll(async () => z?.stop());

  it('a name whose orders failed 5 times in the hour: the 6th POST …/ssl is a 429 with Retry-After, an hour later a 202', async () => {
    const created = await temporarySite(z);
    const uuid = created.uuid as string;
    await waitForOperation(z.s, uuid, 'ssl');
    for (let i = 0; i < 4; i++) {
      const retry = await postSsl(z, uuid);
      expect(retry.statusCode, retry.body).toBe(202);
      await waitForOperation(z.s, uuid, 'ssl');
    }
    expect(accountRequests(z)).toBe(5);
    expect((await getSite(z.s, uuid)).ssl.error).toMatchObject({ code: 'account_failed' });
    const limited = await postSsl(z, uuid);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ code: 'certificate_retry_limited' });
    expect(limited.json().detail).toMatch(/failed 5 times in the last hour .*; it may be ordered again after \d{4}-/);
    const wait = Number(limited.headers['retry-after']);
    expect(wait).toBeGreaterThan(3_500);
    expect(wait).toBeLessThanOrEqual(3_600);
    expect(accountRequests(z)).toBe(5);

    await settle(z.s);
    z.clock.set(new Date(Date.now() + 3_601_000));
    expect((await postSsl(z, uuid)).statusCode).toBe(202);
    await waitForOperation(z.s, uuid, 'ssl');
    expect(accountRequests(z)).toBe(6);
  });

  it('the CA rate-limits: the order is deferred to its Retry-After, POST …/ssl waits for it, the scheduler retries then', async () => {
    await settle(z.s);
    z.answer.current = RATE_LIMITED;
    const created = await temporarySite(z);
    const uuid = created.uuid as string;
    const op = await waitForOperation(z.s, uuid, 'ssl');
    const started = z.clock.now();
    const error = (await getSite(z.s, uuid)).ssl.error;
    expect(error).toMatchObject({ code: 'rate_limited', retry_after_seconds: 1800, retry_at: expect.any(String) });
    const retryAt = Date.parse(error.retry_at);
    expect(retryAt - started.getTime()).toBeGreaterThan(1790_000);
    expect(retryAt - started.getTime()).toBeLessThanOrEqual(1800_000);
    const limited = await postSsl(z, uuid);
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ code: 'certificate_retry_limited' });

    z.answer.current = REFUSE;
    await settle(z.s);
    expect(await z.s.renewals?.tick()).not.toContain(uuid);
    z.clock.set(new Date(retryAt + 1000));
    expect(await z.s.renewals?.tick()).toContain(uuid);
    const next = await waitForOperation(z.s, uuid, 'ssl');
    expect(next.uuid).not.toBe(op.uuid);
    expect((await getSite(z.s, uuid)).ssl.error).toMatchObject({ code: 'account_failed' });
  });
});

describe(`a temporary site still on the former shared zone wildcard (${TEST_DB})`, () => {
  let z: Zone;
  beforeAll(async () => {
    z = await startZone();
  });
  afterAll(async () => z?.stop());

  it('its next ssl run orders a certificate of its own (the wildcard keeps serving meanwhile); the wildcard row goes with its last site', async () => {
    const created = await temporarySite(z);
    const uuid = created.uuid as string;
    await waitForOperation(z.s, uuid, 'ssl');
    await settle(z.s);
    // As the site was before: the zone's wildcard stored and deployed on its server, valid 60 more days.
    const now = new Date();
    const expires = new Date(now.getTime() + 60 * DAY);
    const zoneRow = randomUUID();
    await z.s.storage.db
      .insertInto('certificates')
      .values({
        uuid: zoneRow,
        scope: `zone:${ZONE}`,
        owner: 'siteplane',
        directory_url: z.ca.directoryUrl,
        domains: JSON.stringify([`*.${ZONE}`]),
        material_enc: z.s.useCases.secrets.sealJson({ fullChainPem: 'chain', privateKeyPem: 'key' }),
        serial: '0A',
        not_before: now.toISOString(),
        expires_at: expires.toISOString(),
        lock_until: null,
        locked_by: null,
        next_attempt_at: null,
        last_error: null,
        created_at: now.toISOString(),
        updated_at: now.toISOString(),
      })
      .execute();
    await z.s.storage.db
      .insertInto('site_certificates')
      .values({
        site_uuid: uuid,
        certificate_uuid: zoneRow,
        serial: '0A',
        expires_at: expires.toISOString(),
        renew_after: new Date(expires.getTime() - 30 * DAY).toISOString(),
        deployed_at: now.toISOString(),
      })
      .execute();
    const before = accountRequests(z);
    const retry = await postSsl(z, uuid);
    expect(retry.statusCode, retry.body).toBe(202);
    const op = await waitForOperation(z.s, uuid, 'ssl');
    // It ordered its own name (the stand-in CA refused), not the zone's wildcard.
    expect(accountRequests(z)).toBe(before + 1);
    expect(op.logs.map((l) => l.line).join('\n')).not.toContain(`*.${ZONE}`);
    const issuances = await z.s.storage.db
      .selectFrom('free_domain_issuances')
      .selectAll()
      .where('site_uuid', '=', uuid)
      .execute();
    expect(issuances.map((r) => r.name)).toEqual([created.domain, created.domain]);
    // The deployed wildcard still works: the site stays on HTTPS, with the reason in error.
    expect((await getSite(z.s, uuid)).ssl).toMatchObject({ status: 'active', error: { code: 'account_failed' } });
    expect(await z.s.storage.db.selectFrom('certificates').select('uuid').where('uuid', '=', zoneRow).execute()).toHaveLength(1);

    const del = await z.s.app.inject({ method: 'DELETE', url: `/api/v1/sites/${uuid}`, headers: authOf(z.s) });
    expect(del.statusCode).toBe(202);
    await settle(z.s);
    expect(await z.s.storage.db.selectFrom('certificates').select('scope').execute()).toEqual([]);
  });
});
