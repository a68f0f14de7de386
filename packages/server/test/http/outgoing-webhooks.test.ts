// Issue 12 item 4: outgoing webhooks. A team's endpoints get its change log POSTed by the worker,
// signed the Standard Webhooks way; a real HTTP receiver on loopback checks every request with its
// own implementation of the scheme (node:crypto, not the server's code). Failed attempts are retried
// with backoff (milliseconds here) and logged; another team's events never go out; the secret is
// shown once; the egress policy is applied when an endpoint is created and again at each send.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  LOOPBACK_TARGETS,
  seedServer,
  startTestService,
  TEST_DB,
  type TestService,
  waitForStatus,
} from '../support/test-service.js';
import { type ReceivedWebhook, startWebhookReceiver, verifyStandardWebhook } from '../support/webhook-receiver.js';

type Received = ReceivedWebhook;

/** Names the egress policy resolves here: one forbidden, one that rebinds after its first answer. */
const table: Record<string, string[][]> = {
  'metadata.hooks.test': [['169.254.169.254']],
  'rebind.hooks.test': [['127.0.0.1'], ['169.254.169.254']],
};
const resolveHost = async (host: string) => {
  const list = table[host];
  if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return (list.length > 1 ? list.shift() : list[0]) as string[];
};

const verify = verifyStandardWebhook;

async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>): Promise<T> {
  const end = Date.now() + 15_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe(`outgoing webhooks (${TEST_DB}; issue 12 item 4)`, () => {
  let s: TestService;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  let base: string;
  let received: Received[] = [];
  /** Answers per path: a list consumed one per request, the last one kept. */
  const answers: Record<string, number[]> = { '/flaky': [500, 200], '/down': [503] };
  let ids: { server: string; serverUser: string };
  let otherIds: { server: string; serverUser: string };
  const auth = (token = s.token) => ({ authorization: `Bearer ${token}` });

  const createSite = async (domain: string, token = s.token, at = ids) => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: auth(token),
      payload: { ...at, type: 'static-html', domain, ssl: false, options: {} },
    });
    expect(res.statusCode, res.body).toBe(202);
    return (res.json() as { uuid: string }).uuid;
  };
  const createHook = async (payload: Record<string, unknown>, token = s.token) =>
    s.app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: auth(token), payload });
  const deliveries = async (hook: string) => {
    const res = await s.app.inject({ method: 'GET', url: `/api/v1/webhooks/${hook}/deliveries`, headers: auth() });
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { data: Record<string, unknown>[] }).data;
  };
  const bodyOf = (r: Received) => JSON.parse(r.body) as { type: string; timestamp: string; data: Record<string, unknown> };

  beforeAll(async () => {
    receiver = await startWebhookReceiver(answers);
    ({ base } = receiver);
    received = receiver.received;
    s = await startTestService({
      env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS },
      resolveHost,
      webhookBackoffMs: [50, 50],
    });
    ids = await seedServer(s);
    otherIds = await seedServer(s, {}, s.otherTenantToken);
  });
  afterAll(async () => {
    await s?.stop();
    await receiver?.close();
  });

  it('refuses bad bodies with every field path, and creates nothing', async () => {
    const bad = await createHook({ url: 'http://example.com/hook', events: ['site.installed', 'site.nope', 'nope.*'] });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({ code: 'validation_failed' });
    const fields = (bad.json() as { errors: { field: string; code: string }[] }).errors.map((e) => [e.field, e.code]);
    expect(fields).toEqual([
      ['url', 'insecure_url'],
      ['events.1', 'invalid_value'],
      ['events.2', 'invalid_value'],
    ]);
    const forbidden = await createHook({ url: 'https://metadata.hooks.test/hook', events: ['site.*'] });
    expect(forbidden.statusCode).toBe(422);
    expect(forbidden.json()).toMatchObject({ errors: [{ field: 'url', code: 'target_not_allowed' }] });
    const notUrl = await createHook({ url: 'not a url', events: ['site.*'] });
    expect(notUrl.json()).toMatchObject({ errors: [{ field: 'url', code: 'invalid_format' }] });
    const empty = await createHook({ url: `${base}/x`, events: [] });
    expect(empty.statusCode).toBe(422);
    const list = await s.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: auth() });
    expect(list.json()).toMatchObject({ data: [] });
  });

  it("delivers a site's life, signed, in order, to its team only; the secret is shown once; other teams get 404", async () => {
    const created = await createHook({ url: `${base}/life`, events: ['site.*', 'operation.finished'] });
    expect(created.statusCode, created.body).toBe(201);
    const hook = created.json() as { uuid: string; secret: string; events: string[]; url: string };
    expect(hook.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(hook.secret.slice(6), 'base64')).toHaveLength(24);
    expect(hook.events).toEqual([
      'site.created',
      'site.installed',
      'site.failed',
      'site.deleting',
      'site.deleted',
      'site.delete_failed',
      'operation.finished',
    ]);

    // Never again: not in one, not in the list, not at rest in clear.
    const one = await s.app.inject({ method: 'GET', url: `/api/v1/webhooks/${hook.uuid}`, headers: auth(s.readToken) });
    expect(one.statusCode).toBe(200);
    expect(one.body).not.toContain(hook.secret.slice(6));
    expect(one.json()).not.toHaveProperty('secret');
    const list = await s.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: auth() });
    expect(list.body).not.toContain(hook.secret.slice(6));
    expect((list.json() as { data: { uuid: string }[] }).data.map((h) => h.uuid)).toEqual([hook.uuid]);
    const stored = await s.storage.db.selectFrom('outgoing_webhooks').select('secret_enc').executeTakeFirstOrThrow();
    expect(stored.secret_enc).not.toContain(hook.secret.slice(6));

    // Another team sees none of it.
    for (const [method, url] of [
      ['GET', `/api/v1/webhooks/${hook.uuid}`],
      ['GET', `/api/v1/webhooks/${hook.uuid}/deliveries`],
      ['DELETE', `/api/v1/webhooks/${hook.uuid}`],
    ] as const) {
      const res = await s.app.inject({ method, url, headers: auth(s.otherTenantToken) });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    const theirs = await s.app.inject({ method: 'GET', url: '/api/v1/webhooks', headers: auth(s.otherTenantToken) });
    expect(theirs.json()).toMatchObject({ data: [] });

    const otherSite = await createSite('their-site.example.com', s.otherTenantToken, otherIds);
    const site = await createSite('hooked.example.com');
    await waitForStatus(s, site, ['installed']);
    // The create's operation ends (operation.finished) in the transaction before the site's state.
    await until('site.installed delivered', () =>
      received.some((r) => r.path === '/life' && bodyOf(r).type === 'site.installed'),
    );
    const all = received.filter((r) => r.path === '/life');
    for (const r of all) {
      expect(verify(hook.secret, r), r.body).toBe(true);
      expect(verify('whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', r)).toBe(false);
      expect(r.headers['content-type']).toBe('application/json');
      const body = bodyOf(r);
      expect(r.headers['webhook-id']).toBe(`evt_${body.data.seq}`);
      expect(Number(r.headers['webhook-timestamp'])).toBeGreaterThan(Date.now() / 1000 - 300);
      expect(hook.events).toContain(body.type);
      expect(body.data.site).not.toBe(otherSite);
      expect(body.data.site).toBe(site);
    }
    expect(all.map((r) => bodyOf(r).type)).toEqual(['site.created', 'operation.finished', 'site.installed']);
    expect(bodyOf(all[2] as Received)).toMatchObject({
      type: 'site.installed',
      data: { subject: site, site, domain: 'hooked.example.com', type: 'static-html' },
    });

    const log = await until('three deliveries logged', async () => {
      const d = await deliveries(hook.uuid);
      return d.length === 3 && d;
    });
    for (const [i, d] of log.entries()) {
      expect(d).toMatchObject({
        event_seq: bodyOf(all[i] as Received).data.seq,
        event_type: bodyOf(all[i] as Received).type,
        attempt: 1,
        status_code: 204,
        error: null,
        next_attempt_at: null,
      });
      expect(d.delivered_at).toEqual(expect.any(String));
      expect(d.duration_ms).toEqual(expect.any(Number));
    }

    const removed = await s.app.inject({ method: 'DELETE', url: `/api/v1/webhooks/${hook.uuid}`, headers: auth() });
    expect(removed.statusCode).toBe(204);
    const gone = await s.app.inject({ method: 'GET', url: `/api/v1/webhooks/${hook.uuid}`, headers: auth() });
    expect(gone.statusCode).toBe(404);
  });

  it('retries a failed delivery with the same id, gives up after the last attempt and moves on', async () => {
    const flaky = (await createHook({ url: `${base}/flaky`, events: ['site.created'] })).json() as {
      uuid: string;
      secret: string;
    };
    const down = (await createHook({ url: `${base}/down`, events: ['site.created'] })).json() as { uuid: string };
    const first = await createSite('retry-one.example.com');
    const second = await createSite('retry-two.example.com');

    const tries = await until('a retry after the 500', () => {
      const got = received.filter((r) => r.path === '/flaky');
      return got.length >= 3 && got;
    });
    expect(tries[0]?.headers['webhook-id']).toBe(tries[1]?.headers['webhook-id']);
    expect(bodyOf(tries[0] as Received).data.site).toBe(first);
    expect(bodyOf(tries[2] as Received).data.site).toBe(second);
    for (const r of tries) expect(verify(flaky.secret, r)).toBe(true);
    const flakyLog = await until('the flaky log', async () => {
      const d = await deliveries(flaky.uuid);
      return d.length === 3 && d;
    });
    expect(flakyLog[0]).toMatchObject({ attempt: 1, status_code: 500, delivered_at: null, error: 'the receiver answered 500' });
    expect(flakyLog[0]?.next_attempt_at).toEqual(expect.any(String));
    expect(flakyLog[1]).toMatchObject({ attempt: 2, status_code: 200, next_attempt_at: null, error: null });
    expect(flakyLog[2]).toMatchObject({ attempt: 1, status_code: 200 });

    // Three attempts (the first and two retries) per event, then the next event.
    const downLog = await until('both events given up', async () => {
      const d = await deliveries(down.uuid);
      return d.length === 6 && d;
    });
    expect(downLog.map((d) => d.attempt)).toEqual([1, 2, 3, 1, 2, 3]);
    expect(downLog[2]).toMatchObject({ status_code: 503, next_attempt_at: null, delivered_at: null });
    expect(String(downLog[2]?.error)).toMatch(/gave up after 3 attempts/);
    expect(downLog[3]?.event_seq).not.toBe(downLog[0]?.event_seq);
    const endpoint = await s.app.inject({ method: 'GET', url: `/api/v1/webhooks/${down.uuid}`, headers: auth() });
    expect(endpoint.json()).toMatchObject({ last_event: downLog[5]?.event_seq, next_attempt_at: null });
  });

  it('applies the egress policy at each send: a name that rebinds to a forbidden address is refused', async () => {
    const res = await createHook({ url: 'https://rebind.hooks.test/hook', events: ['site.created'] });
    expect(res.statusCode, res.body).toBe(201);
    const hook = res.json() as { uuid: string };
    await createSite('rebind.example.com');
    const log = await until('an attempt', async () => {
      const d = await deliveries(hook.uuid);
      return d.length > 0 && d;
    });
    expect(log[0]).toMatchObject({ attempt: 1, status_code: null, delivered_at: null });
    expect(String(log[0]?.error)).toMatch(/link-local/);
  });
});
