import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken, revokeToken } from '../../src/storage/tokens.js';
import { seedServer, startTestService, TEST_DB, type TestService } from '../support/test-service.js';

describe(`authentication, tenancy and error shape on ${TEST_DB} (spec §5, §7)`, () => {
  let s: TestService;
  let ids: { server: string; serverUser: string };
  beforeAll(async () => {
    s = await startTestService();
    ids = await seedServer(s);
  });
  afterAll(async () => s?.stop());

  it('§5.1: no token, a malformed header or an unknown token is 401 with WWW-Authenticate and problem+json', async () => {
    for (const headers of [{}, { authorization: 'Basic abc' }, { authorization: 'Bearer sp_nope' }]) {
      const res = await s.app.inject({ method: 'GET', url: `/api/v1/sites?server=${ids.server}`, headers });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.headers['content-type']).toContain('application/problem+json');
      expect(res.json()).toMatchObject({ status: 401, code: 'unauthenticated', request_id: expect.any(String) });
    }
  });

  it('a revoked token is 401', async () => {
    const t = await createToken(s.storage.db, { name: 'short-lived', scope: 'write' });
    const ok = await s.app.inject({ method: 'GET', url: '/api/v1/servers', headers: { authorization: `Bearer ${t.token}` } });
    expect(ok.statusCode).toBe(200);
    await revokeToken(s.storage.db, t.uuid);
    await new Promise((r) => setTimeout(r, 2100)); // the token cache lives two seconds
    const res = await s.app.inject({ method: 'GET', url: '/api/v1/servers', headers: { authorization: `Bearer ${t.token}` } });
    expect(res.statusCode).toBe(401);
  });

  it('a read token may read but not write (403)', async () => {
    const read = await s.app.inject({
      method: 'GET',
      url: `/api/v1/sites?server=${ids.server}`,
      headers: { authorization: `Bearer ${s.readToken}` },
    });
    expect(read.statusCode).toBe(200);
    const write = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${s.readToken}` },
      payload: {},
    });
    expect(write.statusCode).toBe(403);
    expect(write.json().code).toBe('forbidden');
  });

  it('another tenant’s records are 404 on every endpoint, never 403', async () => {
    const created = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${s.token}` },
      payload: { ...ids, type: 'static-html', domain: 'tenant.example.com', ssl: false, options: {} },
    });
    const site = created.json();
    const other = { authorization: `Bearer ${s.otherTenantToken}` };
    // The owner reads first, so the other tenant's reads can meet cached answers (each keeps its team).
    for (const url of [`/api/v1/sites/${site.uuid}`, `/api/v1/sites?server=${ids.server}`]) {
      const own = await s.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${s.token}` } });
      expect(own.statusCode, url).toBe(200);
    }
    const probes = [
      ['GET', `/api/v1/sites/${site.uuid}`],
      ['DELETE', `/api/v1/sites/${site.uuid}`],
      ['GET', `/api/v1/sites?server=${ids.server}`],
      ['GET', `/api/v1/operations/${site.operation.uuid}`],
      ['GET', `/api/v1/servers/${ids.server}`],
      ['POST', `/api/v1/servers/${ids.server}/verify`],
      ['GET', `/api/v1/servers/${ids.server}/users`],
    ] as const;
    for (const [method, url] of probes) {
      const res = await s.app.inject({ method, url, headers: other });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
    }
    // Creating on another tenant's server names the field.
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: other,
      payload: { ...ids, type: 'static-html', domain: 'x.example.com', ssl: false, options: {} },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([expect.objectContaining({ field: 'server', code: 'not_found' })]);
    const list = await s.app.inject({ method: 'GET', url: '/api/v1/servers', headers: other });
    expect(list.json().data).toEqual([]);
  });

  it('400 malformed JSON, 415 non-JSON, 413 oversized, 404 unknown route — all problem+json', async () => {
    const auth = { authorization: `Bearer ${s.token}` };
    const bad = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"type": ',
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('malformed_json');
    const text = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { ...auth, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    expect(text.statusCode).toBe(415);
    expect(text.json().code).toBe('unsupported_media_type');
    const big = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ x: 'a'.repeat(1_100_000) }),
    });
    expect(big.statusCode).toBe(413);
    expect(big.json().code).toBe('body_too_large');
    const nul = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { ...auth, 'content-type': 'application/json' },
      payload: '{"options":{"database":"a\\u0000b"}}',
    });
    expect(nul.statusCode).toBe(422);
    expect(nul.json().errors).toEqual([expect.objectContaining({ field: 'options.database', code: 'invalid_characters' })]);
    const badUrl = await s.app.inject({ method: 'GET', url: '/api/v1/sites/%E0%A4%A', headers: auth });
    expect(badUrl.statusCode).toBe(400);
    expect(badUrl.headers['content-type']).toContain('application/problem+json');
    const none = await s.app.inject({ method: 'GET', url: '/api/v1/nothing', headers: auth });
    expect(none.statusCode).toBe(404);
    expect(none.headers['content-type']).toContain('application/problem+json');
  });

  it('§7: a temporary-domain create with removed fields is 422 and changes nothing', async () => {
    const before = await s.app.inject({
      method: 'GET',
      url: `/api/v1/sites?server=${ids.server}`,
      headers: { authorization: `Bearer ${s.token}` },
    });
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${s.token}` },
      payload: { ...ids, type: 'php', freeDomain: true, domain: 'a.com', sslProvider: 'letsencrypt', options: {} },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json()).toMatchObject({ status: 422, code: 'validation_failed' });
    expect(
      res
        .json()
        .errors.map((e: { field: string }) => e.field)
        .sort(),
    ).toEqual(['domain', 'sslProvider']);
    const after = await s.app.inject({
      method: 'GET',
      url: `/api/v1/sites?server=${ids.server}`,
      headers: { authorization: `Bearer ${s.token}` },
    });
    expect(after.json().data.length).toBe(before.json().data.length);
  });

  it('§4.1: a temporary domain answers 202 with domain and free_domain_base at the top level', async () => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${s.token}` },
      payload: { ...ids, type: 'static-html', freeDomain: true, options: {} },
    });
    expect(res.statusCode).toBe(202);
    const body = res.json();
    expect(body.free_domain_base).toBe('sslip.io');
    expect(body.domain).toMatch(/^[a-z0-9]{16}[0-9]{4}\.127-0-0-1\.sslip\.io$/);
    expect(body.ssl).toMatchObject({ enabled: true });
  });

  it('admin bodies are validated with field paths', async () => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/servers',
      headers: { authorization: `Bearer ${s.token}` },
      payload: { name: '', ip: '10.0.0.1', connection: 'telnet', extra: true },
    });
    expect(res.statusCode).toBe(422);
    const fields = res.json().errors.map((e: { field: string; code: string }) => `${e.field}:${e.code}`);
    expect(fields).toEqual(expect.arrayContaining(['name:too_short', 'connection:invalid_value', 'extra:unknown_field']));
  });

  it('health and OpenAPI need no token; /docs renders every path', async () => {
    const health = await s.app.inject({ method: 'GET', url: '/api/v1/health' });
    expect(health.json()).toMatchObject({ status: 'ok', database: true });
    const doc = await s.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(doc.json().openapi).toBe('3.1.0');
    const docs = await s.app.inject({ method: 'GET', url: '/docs' });
    for (const path of Object.keys(doc.json().paths)) expect(docs.body).toContain(path);
  });
});
