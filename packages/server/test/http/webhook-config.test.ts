// Issue 11 item 6: a site's webhook configuration (secret shown once, sealed at rest; rotation;
// branch filter; tenancy) and its secret trigger URL for plain git hooks and CI.
import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startTestService, TEST_DB, type TestService } from '../support/test-service.js';
import { RecordingTrigger } from '../webhooks/recording-trigger.js';
import { auth, configure, createSite, type Json, lastDelivery, sendHook, withoutRequestId } from '../webhooks/webhook-api.js';

describe(`webhook configuration and trigger URL (${TEST_DB}; issue 11 item 6)`, () => {
  let s: TestService;
  const trigger = new RecordingTrigger();
  let site: string;

  beforeAll(async () => {
    s = await startTestService({ deploymentTrigger: trigger, sourceBranchOf: async () => 'main' });
    site = await createSite(s, 'config.hooks.example.com');
  });
  afterAll(async () => s?.stop());
  beforeEach(() => trigger.reset());

  const get = (path: string, token = s.token) => s.app.inject({ method: 'GET', url: path, headers: auth(token) });

  it('before any POST: enabled false; POST creates it (201) with the secret and trigger URL, shown this once', async () => {
    expect((await get(`/api/v1/sites/${site}/webhook`)).json()).toMatchObject({ site, enabled: false, urls: null, secret: null });
    const res = await configure(s, site);
    expect(res.statusCode).toBe(201);
    const created = res.json();
    expect(created).toMatchObject({
      site,
      enabled: true,
      branches: null,
      secret: expect.stringMatching(/^[0-9a-f]{64}$/),
      trigger_url: expect.stringMatching(/^http:\/\/localhost:80\/api\/v1\/hooks\/sph_[A-Za-z0-9_-]{43}$/),
      urls: {
        github: `http://localhost:80/api/v1/hooks/github/${site}`,
        gitlab: `http://localhost:80/api/v1/hooks/gitlab/${site}`,
        bitbucket: `http://localhost:80/api/v1/hooks/bitbucket/${site}`,
        gitea: `http://localhost:80/api/v1/hooks/gitea/${site}`,
      },
    });
    const again = await get(`/api/v1/sites/${site}/webhook`);
    expect(again.json()).toEqual({ ...created, secret: null, trigger_url: null });
    expect(again.body).not.toContain(created.secret);

    // At rest: the secret sealed, the trigger token only as its SHA-256.
    const token = (created.trigger_url as string).split('/').at(-1) as string;
    const row = await s.storage.db
      .selectFrom('site_webhooks')
      .selectAll()
      .where('site_uuid', '=', site)
      .executeTakeFirstOrThrow();
    expect(JSON.stringify(row)).not.toContain(created.secret);
    expect(JSON.stringify(row)).not.toContain(token);
    expect(row.trigger_hash).toBe(createHash('sha256').update(token).digest('hex'));
    expect(s.useCases.secrets.open(row.secret_enc)).toBe(created.secret);
  });

  it('branches: set, kept when not given, [] for any, null back to the source branch; every bad entry named', async () => {
    expect((await configure(s, site, { branches: ['main', 'release/*'], rotate: [] })).json().branches).toEqual([
      'main',
      'release/*',
    ]);
    const kept = await configure(s, site, { rotate: [] });
    expect(kept.json()).toMatchObject({ branches: ['main', 'release/*'], secret: null, trigger_url: null });
    expect((await configure(s, site, { branches: null, rotate: [] })).json().branches).toBeNull();

    const bad = await configure(s, site, { branches: ['ok', 'has space', '', 7], rotate: ['secret', 'nope'], extra: 1 });
    expect(bad.statusCode).toBe(422);
    const fields = (bad.json().errors as Json[]).map((e) => `${e.field} ${e.code}`);
    expect(fields).toEqual(
      expect.arrayContaining([
        'branches.1 invalid_format',
        'branches.2 too_short',
        'branches.3 invalid_type',
        'rotate.1 invalid_value',
        'extra unknown_field',
      ]),
    );
    const many = await configure(s, site, { branches: Array.from({ length: 51 }, (_, i) => `b${i}`) });
    expect(many.statusCode).toBe(422);
    expect((await get(`/api/v1/sites/${site}/webhook`)).json().branches).toBeNull();
  });

  it('tenancy: another tenant gets 404 on every webhook route; a read token reads but cannot write (403)', async () => {
    for (const [method, path] of [
      ['GET', `/api/v1/sites/${site}/webhook`],
      ['POST', `/api/v1/sites/${site}/webhook`],
      ['DELETE', `/api/v1/sites/${site}/webhook`],
      ['GET', `/api/v1/sites/${site}/webhook/deliveries`],
    ] as const) {
      const res = await s.app.inject({
        method,
        url: path,
        headers: auth(s.otherTenantToken),
        ...(method === 'POST' ? { payload: {} } : {}),
      });
      expect({ path, method, status: res.statusCode, code: res.json().code }).toEqual({
        path,
        method,
        status: 404,
        code: 'not_found',
      });
    }
    expect((await get(`/api/v1/sites/${site}/webhook`, s.readToken)).statusCode).toBe(200);
    expect((await get(`/api/v1/sites/${site}/webhook/deliveries`, s.readToken)).statusCode).toBe(200);
    expect((await configure(s, site, {}, s.readToken)).statusCode).toBe(403);
    const del = await s.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site}/webhook`, headers: auth(s.readToken) });
    expect(del.statusCode).toBe(403);
    expect((await get(`/api/v1/sites/${randomUUID()}/webhook`)).statusCode).toBe(404);
    // The other tenant's own site has no such webhook of ours either.
    const theirs = await createSite(s, 'theirs.hooks.example.com', s.otherTenantToken);
    expect((await get(`/api/v1/sites/${theirs}/webhook`)).statusCode).toBe(404);
    expect((await get(`/api/v1/sites/${theirs}/webhook`, s.otherTenantToken)).json().enabled).toBe(false);
  });

  describe('trigger URL', () => {
    let url: string;
    beforeAll(async () => {
      url = new URL((await configure(s, site, { rotate: ['trigger_url'] })).json().trigger_url).pathname;
    });

    it('a POST without a body deploys the source’s branch; with {branch, commit} those', async () => {
      const bare = await s.app.inject({ method: 'POST', url });
      expect(bare.statusCode).toBe(202);
      expect(bare.json()).toMatchObject({ outcome: 'accepted', deployment: expect.any(String) });
      const named = await sendHook(s, url, JSON.stringify({ branch: 'main', commit: 'ABCDEF1' }), {
        'content-type': 'application/json',
      });
      expect(named.statusCode).toBe(202);
      expect(trigger.triggers).toEqual([
        { site, branch: null, commit: null, deliveryId: expect.any(String) },
        { site, branch: 'main', commit: 'abcdef1', deliveryId: expect.any(String) },
      ]);
      expect(await lastDelivery(s, site)).toMatchObject({
        provider: 'trigger',
        outcome: 'accepted',
        branch: 'main',
        commit: 'abcdef1',
      });
    });

    it('curl’s default form content type with a JSON body, and an empty JSON body, are read too', async () => {
      const curl = await sendHook(s, url, '{"branch":"main"}', { 'content-type': 'application/x-www-form-urlencoded' });
      expect(curl.statusCode).toBe(202);
      expect((await sendHook(s, url, '', { 'content-type': 'application/json' })).statusCode).toBe(202);
      expect(trigger.triggers.map((t) => t.branch)).toEqual(['main', null]);
    });

    it('a branch other than the source’s is ignored (branch_filtered); bad bodies are 400/422 with paths', async () => {
      const other = await sendHook(s, url, '{"branch":"feature"}', { 'content-type': 'application/json' });
      expect({ status: other.statusCode, ...other.json() }).toMatchObject({
        status: 200,
        outcome: 'ignored',
        reason: 'branch_filtered',
      });
      const invalid = await sendHook(s, url, '{"branch":"a b","commit":"xyz","force":true}', {
        'content-type': 'application/json',
      });
      expect(invalid.statusCode).toBe(422);
      expect((invalid.json().errors as Json[]).map((e) => `${e.field} ${e.code}`).sort()).toEqual([
        'branch invalid_format',
        'commit invalid_format',
        'force unknown_field',
      ]);
      expect(await lastDelivery(s, site)).toMatchObject({ outcome: 'rejected', reason: 'invalid_body' });
      expect((await sendHook(s, url, '[1]', {})).statusCode).toBe(422);
      expect((await sendHook(s, url, '{', {})).statusCode).toBe(400);
      expect(trigger.triggers).toEqual([]);
    });

    it('Idempotency-Key makes a CI retry deploy once', async () => {
      const key = randomUUID();
      expect((await sendHook(s, url, '', { 'idempotency-key': key })).statusCode).toBe(202);
      const retry = await sendHook(s, url, '', { 'idempotency-key': key });
      expect({ status: retry.statusCode, ...retry.json() }).toMatchObject({ status: 200, duplicate: true });
      expect(trigger.triggers).toHaveLength(1);
    });

    it('rotation: the old URL answers like any unknown token, the new one deploys', async () => {
      const rotated = await configure(s, site, { rotate: ['trigger_url'] });
      expect(rotated.json().secret).toBeNull();
      const fresh = new URL(rotated.json().trigger_url).pathname;
      const old = await s.app.inject({ method: 'POST', url });
      const unknown = await s.app.inject({ method: 'POST', url: `/api/v1/hooks/sph_${'A'.repeat(43)}` });
      const garbage = await s.app.inject({ method: 'POST', url: '/api/v1/hooks/whatever' });
      expect(old.statusCode).toBe(404);
      expect(withoutRequestId(old)).toEqual(withoutRequestId(unknown));
      expect(withoutRequestId(garbage)).toEqual(withoutRequestId(unknown));
      expect((await s.app.inject({ method: 'POST', url: fresh })).statusCode).toBe(202);
      expect(trigger.triggers).toHaveLength(1);
      url = fresh;
    });

    it('a bearer token is not needed and not looked at; the service’s JSON routes are unaffected by the raw parser', async () => {
      expect((await s.app.inject({ method: 'POST', url, headers: auth('sp_made_up') })).statusCode).toBe(202);
      const site2 = await s.app.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: { ...auth(s.token), 'content-type': 'text/plain' },
        payload: 'x',
      });
      expect(site2.statusCode).toBe(415);
    });
  });
});

describe(`two first POSTs at once (${TEST_DB})`, () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService();
  });
  afterAll(async () => s?.stop());

  it('exactly one creates it (201); the others rotate it (200) or are told to retry (409), never a 500', async () => {
    const site = await createSite(s, 'race.config.example.com');
    const answers = await Promise.all([1, 2, 3, 4].map(() => configure(s, site)));
    const statuses = answers.map((a) => a.statusCode);
    expect(statuses.filter((x) => x === 201)).toHaveLength(1);
    for (const status of statuses) expect([200, 201, 409]).toContain(status);
    const row = await s.storage.db.selectFrom('site_webhooks').selectAll().where('site_uuid', '=', site).execute();
    expect(row).toHaveLength(1);
  });
});
