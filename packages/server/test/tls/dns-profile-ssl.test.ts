// Issue 4 items 3 and 5 without a CA: DNS-profile problems reported in ssl.error before the CA is
// asked (bad credentials, rate limit), and the owned-zone A record of a temporary domain, created
// before the site and removed with it. The DNS provider is the Cloudflare stand-in.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCloudflareStandin } from '../standins/dns/cloudflare.js';
import type { DnsStandin } from '../standins/dns/standin-server.js';
import {
  LOOPBACK_TARGETS,
  seedServer,
  startTestService,
  TEST_DB,
  type TestService,
  waitForStatus,
} from '../support/test-service.js';
import { type FakeCa, makeTestCa, startFakeCa } from './fake-ca.js';
import { authOf, createSite, getSite, logText, recordingExecutor, waitForOperation, waitForOperationUuid } from './support.js';

const ZONE_PROFILE = randomUUID();

describe(`wildcard sites whose DNS profile fails, and owned-zone temporary domains (${TEST_DB})`, () => {
  let cf: DnsStandin<{ apiToken: string }>;
  let s: TestService;
  let ids: { server: string; serverUser: string };
  let ca: FakeCa;

  beforeAll(async () => {
    cf = await startCloudflareStandin({ zones: ['example.com', 'free.example.net'] });
    // A CA that refuses every account at once: these tests are about what happens before it.
    const testCa = makeTestCa();
    ca = await startFakeCa(testCa, () => ({
      status: 403,
      body: { type: 'urn:ietf:params:acme:error:unauthorized', detail: 'test CA refuses accounts', status: 403 },
    }));
    s = await startTestService({
      env: {
        CLOUDFLARE_API_BASE: cf.url,
        ACME_DIRECTORY_LETSENCRYPT: ca.directoryUrl,
        ACME_CA_CERTS: testCa.caPem,
        FREE_DOMAIN_ZONE: 'Free.Example.NET',
        FREE_DOMAIN_DNS_PROFILE: ZONE_PROFILE,
        // The seeded server is 127.0.0.1: its A record is allowed only because loopback is listed.
        SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS,
      },
      executorFor: async () => recordingExecutor(),
    });
    ids = await seedServer(s);
    // The operator's zone profile, as if created through the API before the zone was configured.
    const team = await s.storage.db.selectFrom('teams').select('uuid').executeTakeFirstOrThrow();
    await s.storage.db
      .insertInto('dns_profiles')
      .values({
        uuid: ZONE_PROFILE,
        team_uuid: team.uuid,
        provider: 'cloudflare',
        name: 'operator zone',
        credentials_enc: s.useCases.secrets.sealJson(cf.credentials),
        verified_at: null,
        created_at: new Date().toISOString(),
      })
      .execute();
  });
  afterAll(async () => {
    await s?.stop();
    await cf?.close();
    await ca?.close();
  });

  async function profile(apiToken: string): Promise<string> {
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/dns-profiles',
      headers: authOf(s),
      payload: { provider: 'cloudflare', name: `cf ${apiToken.slice(0, 6)}`, credentials: { apiToken } },
    });
    expect(res.statusCode).toBe(201);
    return res.json().uuid as string;
  }

  const wildcard = (domain: string, uuid: string) => ({
    ...ids,
    type: 'static-html',
    domain,
    ssl: true,
    sslProvider: 'letsencrypt',
    sslEmail: 'ops@example.com',
    wildcard: true,
    dnsProfile: { uuid, provider: 'cloudflare' },
    options: {},
  });

  it('rejected credentials: ssl failed with what to fix, checked before the CA is asked', async () => {
    const site = await createSite(s, wildcard('bad-creds.example.com', await profile('wrong-token-0000')));
    const op = await waitForOperation(s, site.uuid as string, 'ssl');
    const record = await getSite(s, site.uuid as string);
    expect(record.status).toBe('installed');
    expect(record.ssl).toMatchObject({ status: 'failed', error: { code: 'dns_provider_failed', operation: op.uuid } });
    expect(record.ssl.error.message).toBe(
      'The provider rejected the credentials of the DNS profile "cf wrong-" (cloudflare): cloudflare: Invalid API Token (1000) (HTTP 401). ' +
        "Update the profile's credentials, then retry (POST /api/v1/sites/<uuid>/ssl).",
    );
    expect(ca.requests).toEqual([]);
  });

  it('a rate-limited provider: ssl failed as rate_limited with the wait it asked for', async () => {
    const uuid = await profile(cf.credentials.apiToken);
    cf.rateLimit(1, 3600);
    const site = await createSite(s, wildcard('limited.example.com', uuid));
    await waitForOperation(s, site.uuid as string, 'ssl');
    const record = await getSite(s, site.uuid as string);
    expect(record.status).toBe('installed');
    expect(record.ssl.error).toMatchObject({ code: 'rate_limited', retry_after_seconds: 3600 });
    expect(record.ssl.error.message).toMatch(/is rate-limiting Siteplane .*; try again in 3600 s\.$/);
  });

  it('spec §4.1 rule 3: owned zone: <label>.<zone> with an A record made before the site and removed with it', async () => {
    const created = await createSite(s, { ...ids, type: 'static-html', freeDomain: true, options: {} });
    const domain = created.domain as string;
    expect(domain).toMatch(/^[a-z0-9]{16}[0-9]{4}\.free\.example\.net$/);
    expect(created.free_domain_base).toBe('free.example.net');
    await waitForStatus(s, created.uuid as string, ['installed']);
    expect(cf.records().filter((r) => r.type === 'A')).toEqual([expect.objectContaining({ name: domain, value: '127.0.0.1' })]);
    const create = await s.app.inject({
      method: 'GET',
      url: `/api/v1/operations/${(await waitForOperation(s, created.uuid as string, 'ssl')).uuid}`,
      headers: authOf(s),
    });
    // The name's own certificate is ordered with the operator's profile, after its credentials are checked.
    expect(logText(create.json())).toContain('Checking the credentials of DNS profile "operator zone" (cloudflare)');
    expect((await getSite(s, created.uuid as string)).ssl.error).toMatchObject({
      code: 'account_failed',
      message: expect.stringContaining('test CA refuses accounts'),
    });

    const del = await s.app.inject({ method: 'DELETE', url: `/api/v1/sites/${created.uuid}`, headers: authOf(s) });
    expect(del.statusCode).toBe(202);
    const op = await waitForOperationUuid(s, del.json().operation.uuid);
    expect(op.status).toBe('succeeded');
    expect(op.steps.map((x: { name: string }) => x.name)).toContain('remove DNS records');
    expect(cf.records().filter((r) => r.type === 'A')).toEqual([]);
  });
});
