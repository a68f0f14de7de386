// Managing an outgoing webhook (issue 12 item 4, what a demanding user expects): rotating its
// secret (the new one shown once; during the grace period each delivery carries both signatures),
// pausing and resuming it (events wait and are delivered in order on resume, none skipped), changing
// its url or events under the create's rules, and resending a delivery by hand. A real receiver on
// loopback checks the signatures with its own code (test/support/webhook-receiver.ts).
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

interface Hook {
  uuid: string;
  secret: string;
  enabled: boolean;
  previous_secret_expires_at: string | null;
  events: string[];
  url: string;
}
interface Delivery {
  uuid: string;
  event_seq: number;
  event_type: string;
  attempt: number;
  status_code: number | null;
  delivered_at: string | null;
  resend_of: string | null;
}

async function until<T>(what: string, probe: () => T | undefined | false | Promise<T | undefined | false>): Promise<T> {
  const end = Date.now() + 20_000;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe(`outgoing webhook rotation, pause, changes and resend (${TEST_DB})`, () => {
  let s: TestService;
  let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
  const answers: Record<string, number[]> = { '/down': [503] };
  let ids: { server: string; serverUser: string };
  let n = 0;
  const auth = (token = s.token) => ({ authorization: `Bearer ${token}` });
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, payload?: unknown, token = s.token) =>
    s.app.inject({ method, url, headers: auth(token), ...(payload === undefined ? {} : { payload: payload as object }) });
  const createHook = async (path: string) => {
    const res = await call('POST', '/api/v1/webhooks', { url: `${receiver.base}${path}`, events: ['site.*'] });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as Hook;
  };
  /** A site through its whole create; answers its uuid once installed. */
  const siteLife = async () => {
    const res = await call('POST', '/api/v1/sites', {
      ...ids,
      type: 'static-html',
      domain: `ctl-${n++}.example.com`,
      ssl: false,
      options: {},
    });
    expect(res.statusCode, res.body).toBe(202);
    const site = (res.json() as { uuid: string }).uuid;
    await waitForStatus(s, site, ['installed']);
    return site;
  };
  const at = (path: string) => receiver.received.filter((r) => r.path === path);
  const bodyOf = (r: ReceivedWebhook) => JSON.parse(r.body) as { type: string; data: { seq: number; site: string } };
  const deliveredTo = (path: string, site: string, type = 'site.installed') =>
    at(path).some((r) => bodyOf(r).type === type && bodyOf(r).data.site === site);
  const deliveries = async (hook: string) => {
    const res = await call('GET', `/api/v1/webhooks/${hook}/deliveries?limit=500`);
    expect(res.statusCode, res.body).toBe(200);
    return (res.json() as { data: Delivery[] }).data;
  };

  beforeAll(async () => {
    receiver = await startWebhookReceiver(answers);
    s = await startTestService({ env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS }, webhookBackoffMs: [50] });
    ids = await seedServer(s);
  });
  afterAll(async () => {
    await s?.stop();
    await receiver?.close();
  });

  it('rotates the secret: shown once, both sign during the grace period, only the new one after a rotation without grace', async () => {
    const hook = await createHook('/rotate');
    const rotated = await call('POST', `/api/v1/webhooks/${hook.uuid}/rotate-secret`);
    expect(rotated.statusCode, rotated.body).toBe(200);
    const second = rotated.json() as Hook;
    expect(second.secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(second.secret).not.toBe(hook.secret);
    const graceEnds = Date.parse(String(second.previous_secret_expires_at));
    expect(graceEnds).toBeGreaterThan(Date.now() + 23 * 3600_000);
    expect(graceEnds).toBeLessThan(Date.now() + 25 * 3600_000);

    // Never again: not in GET, not in the list, neither secret in clear at rest.
    const one = await call('GET', `/api/v1/webhooks/${hook.uuid}`, undefined, s.readToken);
    expect(one.json()).not.toHaveProperty('secret');
    expect(one.json()).toMatchObject({ previous_secret_expires_at: second.previous_secret_expires_at, enabled: true });
    const list = await call('GET', '/api/v1/webhooks');
    for (const secret of [hook.secret, second.secret]) {
      expect(one.body).not.toContain(secret.slice(6));
      expect(list.body).not.toContain(secret.slice(6));
    }
    const stored = await s.storage.db
      .selectFrom('outgoing_webhooks')
      .select(['secret_enc', 'previous_secret_enc'])
      .where('uuid', '=', hook.uuid)
      .executeTakeFirstOrThrow();
    for (const secret of [hook.secret, second.secret])
      expect(`${stored.secret_enc} ${stored.previous_secret_enc}`).not.toContain(secret.slice(6));

    // During the grace period: two signatures, each secret verifies on its own.
    const site = await siteLife();
    await until('delivered during the grace period', () => deliveredTo('/rotate', site));
    for (const r of at('/rotate')) {
      expect(String(r.headers['webhook-signature']).split(' ')).toHaveLength(2);
      expect(verifyStandardWebhook(hook.secret, r), r.body).toBe(true);
      expect(verifyStandardWebhook(second.secret, r), r.body).toBe(true);
    }

    // Again, with no grace: from now on only the newest signs.
    const third = (await call('POST', `/api/v1/webhooks/${hook.uuid}/rotate-secret`, { graceSeconds: 0 })).json() as Hook;
    expect(third.previous_secret_expires_at).toBeNull();
    const before = at('/rotate').length;
    const later = await siteLife();
    await until('delivered after the rotation', () => deliveredTo('/rotate', later));
    for (const r of at('/rotate').slice(before)) {
      expect(String(r.headers['webhook-signature']).split(' ')).toHaveLength(1);
      expect(verifyStandardWebhook(third.secret, r)).toBe(true);
      expect(verifyStandardWebhook(second.secret, r)).toBe(false);
      expect(verifyStandardWebhook(hook.secret, r)).toBe(false);
    }

    // Bad grace, another team, a read token: refused, nothing rotated.
    const bad = await call('POST', `/api/v1/webhooks/${hook.uuid}/rotate-secret`, { graceSeconds: 604_801 });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toMatchObject({ code: 'validation_failed' });
    expect((await call('POST', `/api/v1/webhooks/${hook.uuid}/rotate-secret`, {}, s.otherTenantToken)).statusCode).toBe(404);
    expect((await call('POST', `/api/v1/webhooks/${hook.uuid}/rotate-secret`, {}, s.readToken)).statusCode).toBe(403);
    const after = await s.storage.db
      .selectFrom('outgoing_webhooks')
      .select('secret_enc')
      .where('uuid', '=', hook.uuid)
      .executeTakeFirstOrThrow();
    expect(s.useCases.secrets.open(after.secret_enc)).toBe(third.secret);
  });

  it('pauses without skipping: events recorded while paused are delivered in order on resume', async () => {
    const hook = await createHook('/pause');
    const paused = await call('PATCH', `/api/v1/webhooks/${hook.uuid}`, { enabled: false });
    expect(paused.statusCode, paused.body).toBe(200);
    expect(paused.json()).toMatchObject({ enabled: false, url: hook.url, events: hook.events });
    const sites = [await siteLife(), await siteLife()];
    // Every event of both is in the log and the dispatcher (50 ms poll here) had many turns: none went out.
    await new Promise((r) => setTimeout(r, 1_000));
    expect(at('/pause')).toEqual([]);
    expect(await deliveries(hook.uuid)).toEqual([]);

    const resumed = await call('PATCH', `/api/v1/webhooks/${hook.uuid}`, { enabled: true });
    expect(resumed.json()).toMatchObject({ enabled: true });
    await until('the paused events delivered', () => sites.every((site) => deliveredTo('/pause', site)));
    const got = at('/pause').map((r) => bodyOf(r));
    expect(got.map((b) => `${b.data.site} ${b.type}`)).toEqual(
      sites.flatMap((site) => [`${site} site.created`, `${site} site.installed`]),
    );
    for (const r of at('/pause')) expect(verifyStandardWebhook(hook.secret, r)).toBe(true);
  });

  it('changes url and events under the create rules; a refused change changes nothing', async () => {
    const hook = await createHook('/before');
    const bad = await call('PATCH', `/api/v1/webhooks/${hook.uuid}`, { url: 'http://example.com/x', events: ['nope'] });
    expect(bad.statusCode).toBe(422);
    expect((bad.json() as { errors: { field: string; code: string }[] }).errors.map((e) => [e.field, e.code])).toEqual([
      ['url', 'insecure_url'],
      ['events.0', 'invalid_value'],
    ]);
    const empty = await call('PATCH', `/api/v1/webhooks/${hook.uuid}`, {});
    expect(empty.statusCode).toBe(422);
    const unknown = await call('PATCH', `/api/v1/webhooks/${hook.uuid}`, { secret: 'whsec_x' });
    expect(unknown.statusCode).toBe(422);
    expect((await call('GET', `/api/v1/webhooks/${hook.uuid}`)).json()).toMatchObject({ url: hook.url, events: hook.events });
    expect((await call('PATCH', `/api/v1/webhooks/${hook.uuid}`, { enabled: false }, s.otherTenantToken)).statusCode).toBe(404);

    const changed = await call('PATCH', `/api/v1/webhooks/${hook.uuid}`, {
      url: `${receiver.base}/after`,
      events: ['site.installed'],
    });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json()).toMatchObject({ url: `${receiver.base}/after`, events: ['site.installed'], enabled: true });
    const site = await siteLife();
    await until('delivered to the new url', () => deliveredTo('/after', site));
    expect(at('/after').map((r) => bodyOf(r).type)).toEqual(['site.installed']);
    expect(at('/before')).toEqual([]);
  });

  it('resends a given-up delivery once, with the same webhook-id, logged as a resend; 409 once the event is pruned', async () => {
    const hook = await createHook('/down');
    const site = await siteLife();
    // Backoff [50]: two attempts per event, then given up; both events end given up.
    await until('both events given up', async () => {
      const log = await deliveries(hook.uuid);
      return log.filter((d) => d.attempt === 2).length === 2 && log;
    });
    const log = await deliveries(hook.uuid);
    const lastInstalled = log.filter((d) => d.event_type === 'site.installed').at(-1) as Delivery;
    expect(lastInstalled).toMatchObject({ status_code: 503, delivered_at: null, resend_of: null });

    answers['/down'] = [200];
    const before = at('/down').length;
    const resent = await call('POST', `/api/v1/webhooks/${hook.uuid}/deliveries/${lastInstalled.uuid}/resend`);
    expect(resent.statusCode, resent.body).toBe(201);
    expect(resent.json()).toMatchObject({
      event_seq: lastInstalled.event_seq,
      event_type: 'site.installed',
      attempt: 1,
      status_code: 200,
      resend_of: lastInstalled.uuid,
      next_attempt_at: null,
    });
    expect((resent.json() as Delivery).delivered_at).not.toBeNull();
    const sent = at('/down').slice(before);
    expect(sent).toHaveLength(1);
    expect(sent[0]?.headers['webhook-id']).toBe(`evt_${lastInstalled.event_seq}`);
    expect(bodyOf(sent[0] as ReceivedWebhook)).toMatchObject({ type: 'site.installed', data: { site } });
    expect(verifyStandardWebhook(hook.secret, sent[0] as ReceivedWebhook)).toBe(true);
    expect((await deliveries(hook.uuid)).at(-1)).toMatchObject({ resend_of: lastInstalled.uuid, status_code: 200 });

    // Unknown delivery, another endpoint's, another team, a read token.
    const other = await createHook('/other');
    for (const [url, token, status] of [
      [`/api/v1/webhooks/${hook.uuid}/deliveries/00000000-0000-4000-8000-000000000000/resend`, s.token, 404],
      [`/api/v1/webhooks/${hook.uuid}/deliveries/not-a-uuid/resend`, s.token, 404],
      [`/api/v1/webhooks/${other.uuid}/deliveries/${lastInstalled.uuid}/resend`, s.token, 404],
      [`/api/v1/webhooks/${hook.uuid}/deliveries/${lastInstalled.uuid}/resend`, s.otherTenantToken, 404],
      [`/api/v1/webhooks/${hook.uuid}/deliveries/${lastInstalled.uuid}/resend`, s.readToken, 403],
    ] as const)
      expect(`${url} ${(await call('POST', url, undefined, token)).statusCode}`).toBe(`${url} ${status}`);
    expect(at('/down').slice(before)).toHaveLength(1);

    // Pruned from the change log (retention): nothing to send.
    await s.storage.db.deleteFrom('events').where('seq', '=', lastInstalled.event_seq).execute();
    const gone = await call('POST', `/api/v1/webhooks/${hook.uuid}/deliveries/${lastInstalled.uuid}/resend`);
    expect(gone.statusCode).toBe(409);
    expect(gone.json()).toMatchObject({ code: 'conflict' });
    expect(at('/down').slice(before)).toHaveLength(1);
  });
});
