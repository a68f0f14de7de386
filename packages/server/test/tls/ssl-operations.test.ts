// Issue 4 items 2-4 without a CA: the `ssl` operation that follows an install, its failures in
// the site record (the site stays installed), and POST /api/v1/sites/<uuid>/ssl.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTxtDnsServer, type TxtDnsServer } from '../standins/dns/txt-dns-server.js';
import { fakeRecipes, seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';
import { authOf, closedDirectoryUrl, createSite, getSite, logText, recordingExecutor, waitForOperation } from './support.js';

const sslSite = (ids: { server: string; serverUser: string }, domain: string) => ({
  ...ids,
  type: 'static-html',
  domain,
  ssl: true,
  sslProvider: 'letsencrypt',
  sslEmail: 'ops@example.com',
  options: {},
});

describe(`ssl operations on a dry-run server (${TEST_DB})`, () => {
  let s: TestService;
  let ids: { server: string; serverUser: string };
  beforeAll(async () => {
    s = await startTestService();
    ids = await seedServer(s);
  });
  afterAll(async () => s?.stop());

  it('queues an ssl operation once the site is installed; a dry run orders nothing and says what it would', async () => {
    const created = await createSite(s, sslSite(ids, 'dry.example.com'));
    expect(created).toMatchObject({ operation: { kind: 'create' }, ssl: { enabled: true, status: 'pending', error: null } });
    const op = await waitForOperation(s, created.uuid as string, 'ssl');
    expect(op.status).toBe('succeeded');
    expect(op.steps.map((x: { name: string }) => x.name)).toEqual([
      'obtain certificate',
      'install certificate',
      'ensure nginx vhost with TLS',
      'check the served certificate',
      'record certificate',
    ]);
    expect(logText(op)).toContain(
      'dry-run server: would order dry.example.com from https://acme-v02.api.letsencrypt.org/directory (http-01); nothing is requested',
    );
    const site = await getSite(s, created.uuid as string);
    expect(site).toMatchObject({ status: 'installed', ssl: { status: 'pending', expires_at: null } });
    // The change log says the operation finished, but no certificate was issued (issue 12).
    const events = await s.storage.db
      .selectFrom('events')
      .select('kind')
      .where('subject_uuid', 'in', [op.uuid, created.uuid as string])
      .execute();
    expect(events.map((e) => e.kind)).toContain('operation.finished');
    expect(events.filter((e) => e.kind.startsWith('certificate.')).map((e) => e.kind)).toEqual([]);
  });

  it('queues nothing for a site without TLS', async () => {
    const created = await createSite(s, { ...ids, type: 'static-html', domain: 'plain.example.com', ssl: false, options: {} });
    await waitForStatus(s, created.uuid as string, ['installed']);
    await new Promise((r) => setTimeout(r, 200));
    expect((await getSite(s, created.uuid as string)).operation.kind).toBe('create');
  });
});

describe(`certificate failures leave the site installed (${TEST_DB})`, () => {
  let s: TestService;
  let dns: TxtDnsServer;
  let ids: { server: string; serverUser: string };
  let gate: () => void = () => {};
  const commands: string[] = [];

  beforeAll(async () => {
    dns = await startTxtDnsServer();
    s = await startTestService({
      env: { DNS_RESOLVERS: dns.address, ACME_DIRECTORY_LETSENCRYPT: await closedDirectoryUrl() },
      executorFor: async () => recordingExecutor(commands),
      recipes: fakeRecipes({ gate: new Promise<void>((resolve) => (gate = resolve)) }),
    });
    ids = await seedServer(s);
  });
  afterAll(async () => {
    gate();
    await s?.stop();
    await dns?.close();
  });

  it('POST …/ssl before the site is installed is a 409; after a DNS failure the reason is in ssl.error', async () => {
    const created = await createSite(s, sslSite(ids, 'nowhere.example.com'));
    const uuid = created.uuid as string;
    await waitForStatus(s, uuid, ['installing']);
    const early = await s.app.inject({ method: 'POST', url: `/api/v1/sites/${uuid}/ssl`, headers: authOf(s) });
    expect(early.statusCode).toBe(409);
    expect(early.json()).toMatchObject({ code: 'conflict', detail: expect.stringContaining('installing') });

    gate();
    const op = await waitForOperation(s, uuid, 'ssl');
    expect(op.status).toBe('failed');
    expect(op.steps.find((x: { name: string }) => x.name === 'obtain certificate')?.status).toBe('failed');
    const site = await getSite(s, uuid);
    expect(site.status).toBe('installed');
    expect(site.failure).toBeNull();
    expect(site.ssl).toMatchObject({
      status: 'failed',
      expires_at: null,
      error: {
        code: 'dns_not_pointing',
        message: expect.stringMatching(
          /^nowhere\.example\.com has no A or AAAA record\. Point it to this server \(127\.0\.0\.1\)/,
        ),
        operation: op.uuid,
      },
    });
    // Nothing reached the server's TLS set-up: the vhost stays the HTTP one.
    expect(commands.some((c) => c.includes('/etc/siteplane/certificates'))).toBe(false);
    // The change log has the failure, with its reason (issue 12).
    const failed = await s.storage.db
      .selectFrom('events')
      .select(['payload'])
      .where('kind', '=', 'certificate.failed')
      .where('subject_uuid', '=', uuid)
      .execute();
    expect(failed.map((e) => JSON.parse(e.payload))).toEqual([
      expect.objectContaining({ operation: op.uuid, domain: 'nowhere.example.com' }),
    ]);
  });

  it('POST …/ssl retries: 202 with a queued ssl operation, the same one while it is open', async () => {
    const created = await createSite(s, sslSite(ids, 'retry.example.com'));
    const uuid = created.uuid as string;
    const first = await waitForOperation(s, uuid, 'ssl');
    // With the worker stopped the retry stays queued, so a second request meets it.
    await s.worker?.stop();
    let queued: string;
    try {
      const retry = await s.app.inject({ method: 'POST', url: `/api/v1/sites/${uuid}/ssl`, headers: authOf(s) });
      expect(retry.statusCode).toBe(202);
      expect(retry.headers.location).toBe(`/api/v1/sites/${uuid}`);
      expect(retry.json()).toMatchObject({
        status: 'installed',
        operation: { kind: 'ssl', status: 'queued' },
        ssl: { status: 'pending' },
      });
      queued = retry.json().operation.uuid;
      expect(queued).not.toBe(first.uuid);
      const again = await s.app.inject({ method: 'POST', url: `/api/v1/sites/${uuid}/ssl`, headers: authOf(s), payload: {} });
      expect(again.statusCode).toBe(202);
      expect(again.json().operation.uuid).toBe(queued);
    } finally {
      s.worker?.start();
    }
    const op = await waitForOperation(s, uuid, 'ssl');
    expect(op.uuid).toBe(queued);
    expect(op.status).toBe('failed');
    expect((await getSite(s, uuid)).ssl).toMatchObject({ status: 'failed', error: { operation: queued } });
  });

  it('POST …/ssl refuses: unknown or foreign site 404, read-only token 403, ssl false 422, a body 422', async () => {
    const plain = await createSite(s, { ...ids, type: 'static-html', domain: 'plain.example.org', ssl: false, options: {} });
    await waitForStatus(s, plain.uuid as string, ['installed']);
    const post = (uuid: string, token = s.token, payload?: unknown) =>
      s.app.inject({
        method: 'POST',
        url: `/api/v1/sites/${uuid}/ssl`,
        headers: authOf(s, token),
        ...(payload ? { payload } : {}),
      });
    expect((await post('00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await post(plain.uuid as string, s.otherTenantToken)).statusCode).toBe(404);
    expect((await post(plain.uuid as string, s.readToken)).statusCode).toBe(403);
    const noTls = await post(plain.uuid as string);
    expect(noTls.statusCode).toBe(422);
    expect(noTls.json().errors).toEqual([expect.objectContaining({ field: 'ssl', code: 'requires_ssl' })]);
    const body = await post(plain.uuid as string, s.token, { provider: 'zerossl' });
    expect(body.statusCode).toBe(422);
    expect(body.json().errors).toEqual([expect.objectContaining({ field: 'provider', code: 'unknown_field' })]);
  });
});
