import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedServer, startTestService, TEST_DB, type TestService } from '../support/test-service.js';

/**
 * Malformed requests answer a 4xx problem+json, never a 5xx (ARCHITECTURE §2 Errors): odd query
 * strings on every list route, and bodies no client should send to any write route.
 */
describe(`malformed queries and bodies on ${TEST_DB} (robustness)`, () => {
  let s: TestService;
  let server: string;
  let site: string;
  let operation: string;
  beforeAll(async () => {
    s = await startTestService({ env: { SITEPLANE_WORKER: 'off' } });
    const ids = await seedServer(s);
    server = ids.server;
    const created = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${s.token}` },
      payload: { ...ids, type: 'static-html', domain: 'fuzz.example.com', ssl: false, options: {} },
    });
    site = created.json().uuid;
    operation = created.json().operation.uuid;
  });
  afterAll(async () => s?.stop());

  /** Every list route; a profile nobody has is enough for the repositories list: its query is read first. */
  const listRoutes = () => [
    `/api/v1/sites?server=${server}&`,
    '/api/v1/sites?',
    '/api/v1/servers?',
    `/api/v1/servers/${server}/users?`,
    '/api/v1/dns-profiles?',
    '/api/v1/vc-profiles?',
    `/api/v1/vc-profiles/${randomUUID()}/repos?`,
    `/api/v1/operations/${operation}?`,
  ];

  function expectProblemOrSuccess(res: LightMyRequestResponse, context: string): void {
    expect(res.statusCode, `${context}: ${res.body.slice(0, 300)}`).toBeLessThan(500);
    if (res.statusCode < 400) return;
    expect(res.headers['content-type'], context).toMatch(/^application\/problem\+json/);
    const problem = res.json();
    expect(problem.status, context).toBe(res.statusCode);
    expect(typeof problem.code, context).toBe('string');
  }

  const get = (url: string) => s.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${s.token}` } });

  it('a parameter given twice is a 400 invalid_query naming it, not a 500', async () => {
    const res = await get(`/api/v1/sites?server=${server}&server=${server}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_query', errors: [{ field: 'server', code: 'duplicate' }] });
    const limit = await get('/api/v1/servers?limit=1&limit=2');
    expect(limit.json()).toMatchObject({ code: 'invalid_query', errors: [{ field: 'limit', code: 'duplicate' }] });
  });

  it('a cursor hiding a NUL character is a 400, on PostgreSQL too', async () => {
    const cursor = Buffer.from(`2024-01-01T00:00:00.000Z|${randomUUID().slice(0, 30)}\0x`).toString('base64url');
    const res = await get(`/api/v1/sites?server=${server}&cursor=${cursor}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_query', errors: [{ field: 'cursor' }] });
  });

  it('a body of 20,000 nested arrays is a 400 before authentication, not a stack overflow', async () => {
    const payload = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    for (const headers of [{}, { authorization: `Bearer ${s.token}` }]) {
      const res = await s.app.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: { ...headers, 'content-type': 'application/json' },
        payload,
      });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ code: 'malformed_json' });
    }
  });

  const names = fc.oneof(
    fc.constantFrom('server', 'limit', 'cursor', 'after', 'a[]', 'a[b]', 'server[]', 'limit[0]', '', '__proto__', 'constructor'),
    fc.constantFrom('%', '%zz', '%00', '%C0%80', '&', '=', 'hasOwnProperty', 'toString'),
    fc.string({ maxLength: 8 }),
  );
  const values = (): fc.Arbitrary<string> =>
    fc.oneof(
      fc.constantFrom('', '0', '-1', '1', '500', '501', '1e2', '0x10', 'NaN', 'Infinity', 'true', 'null', '[]', '{}'),
      fc.constantFrom('%', '%zz', '%00', '%C0%80', '%FF%FE', '%E2%82', '+', '%2B', 'a%20b', '\u00e9'),
      fc.constant(server),
      fc.uuid(),
      fc.string({ maxLength: 30 }),
      fc.string({ maxLength: 40 }).map((x) => Buffer.from(x).toString('base64url')),
      fc
        .tuple(fc.date({ noInvalidDate: true }), fc.string({ maxLength: 40 }))
        .map(([d, x]) => Buffer.from(`${d.toISOString()}|${x}`).toString('base64url')),
      fc.integer({ min: 1_000, max: 6_000 }).map((n) => 'x'.repeat(n)),
    );
  /** `name=value`, a bare `name`, each encoded or raw (a broken %-escape must not reach a handler). */
  const param = fc
    .tuple(names, values(), fc.constantFrom('raw', 'encoded', 'bare'))
    .map(([name, value, how]) =>
      how === 'bare' ? name : how === 'raw' ? `${name}=${value}` : `${encodeURIComponent(name)}=${encodeURIComponent(value)}`,
    );

  it('any query string on any list route: below 500 and problem+json', async () => {
    const routes = listRoutes();
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), fc.array(param, { maxLength: 6 }), async (route, params) => {
        const url = `${route}${params.join('&')}`;
        expectProblemOrSuccess(await get(url), url.slice(0, 200));
      }),
      { numRuns: 400, interruptAfterTimeLimit: 30_000 },
    );
  }, 60_000);

  /** Bodies no route accepts as they are: deep, huge, of the wrong type, with NUL, not UTF-8, not JSON. */
  const nested = fc
    .tuple(fc.integer({ min: 1, max: 30_000 }), fc.constantFrom('[', '{"a":'), fc.constantFrom('1', '"x"', '[]', '{}'))
    .map(([depth, open, leaf]) => `${open.repeat(depth)}${leaf}${(open === '[' ? ']' : '}').repeat(depth)}`);
  const json = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.stringify(v));
  const wrongTypes = fc
    .dictionary(
      fc.constantFrom(
        'server',
        'serverUser',
        'type',
        'domain',
        'name',
        'ip',
        'connection',
        'username',
        'provider',
        'credentials',
      ),
      fc.oneof(
        fc.integer(),
        fc.boolean(),
        fc.constant(null),
        fc.array(fc.integer(), { maxLength: 3 }),
        fc.object({ maxDepth: 2 }),
      ),
      { maxKeys: 5 },
    )
    .map((v) => JSON.stringify(v));
  const huge = fc
    .tuple(fc.integer({ min: 10_000, max: 200_000 }), fc.constantFrom('0', '"\\u0000"', '{}', '[]', 'null'))
    .map(([n, item]) => `[${Array.from({ length: n }, () => item).join(',')}]`);
  const hugeObject = fc
    .integer({ min: 1_000, max: 40_000 })
    .map((n) => `{${Array.from({ length: n }, (_, i) => `"k${i}\\u0000":${i}`).join(',')}}`);
  const withNul = fc.string({ maxLength: 20 }).map((x) => JSON.stringify({ name: `${x}\0`, ip: '\0', [`k\0${x}`]: 1 }));
  const notUtf8 = fc
    .uint8Array({ minLength: 1, maxLength: 64 })
    .map((bytes) => Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xc3, 0x28, 0xff, ...bytes]), Buffer.from('"}')]));
  const notJson = fc.constantFrom('{', '[1,]', '{"a":1,}', 'undefined', "{'a':1}", '\u0000', '"\\ud800"', 'NaN', '1e999999');
  const body = fc.oneof(nested, json, wrongTypes, huge, hugeObject, withNul, notUtf8, notJson);

  it('any malformed body on any write route: below 500 and problem+json', async () => {
    // Only bodies no route accepts as valid: none makes the service reach a remote host.
    const writes = (): { method: 'POST' | 'DELETE'; url: string }[] => [
      { method: 'POST', url: '/api/v1/sites' },
      { method: 'DELETE', url: `/api/v1/sites/${randomUUID()}` },
      { method: 'POST', url: `/api/v1/sites/${site}/retry` },
      { method: 'POST', url: `/api/v1/sites/${site}/ssl` },
      { method: 'POST', url: '/api/v1/servers' },
      { method: 'POST', url: `/api/v1/servers/${server}/users` },
      { method: 'POST', url: '/api/v1/dns-profiles' },
      { method: 'POST', url: '/api/v1/vc-profiles' },
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...writes()),
        body,
        fc.constantFrom('application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1', 'text/plain'),
        fc.boolean(),
        async (route, payload, contentType, authenticated) => {
          const res = await s.app.inject({
            ...route,
            headers: {
              'content-type': contentType,
              ...(authenticated ? { authorization: `Bearer ${s.token}` } : {}),
            },
            payload,
          });
          expectProblemOrSuccess(res, `${route.method} ${route.url} ${String(payload).slice(0, 80)}`);
          // A random JSON value may make a valid admin record; nothing else may succeed.
          if (res.statusCode < 400) expect(route.url).toMatch(/servers|dns-profiles|sites$/);
        },
      ),
      { numRuns: 250, interruptAfterTimeLimit: 40_000 },
    );
  }, 90_000);
});
