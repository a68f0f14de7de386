import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, TEST_DB, type TestService } from '../support/test-service.js';

// The limits count calendar minutes: a clock held in the middle of one, so no test crosses into the next.
const MID_MINUTE = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 30_000);
const clock = { now: () => MID_MINUTE };

describe(`rate limits per token and per address on ${TEST_DB} (ARCHITECTURE §2 "Errors": 429 with Retry-After)`, () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService({ env: { SITEPLANE_RATE_LIMIT: '5', SITEPLANE_RATE_LIMIT_ADDRESS: '3' }, clock });
  });
  afterAll(async () => s?.stop());

  const get = (headers: Record<string, string>, url = '/api/v1/servers') => s.app.inject({ method: 'GET', url, headers });

  it('a token past SITEPLANE_RATE_LIMIT gets 429 rate_limited with Retry-After; another token is unaffected', async () => {
    const auth = { authorization: `Bearer ${s.token}` };
    for (let i = 0; i < 5; i++) expect((await get(auth)).statusCode).toBe(200);
    const over = await get(auth);
    expect(over.statusCode).toBe(429);
    expect(over.headers['content-type']).toContain('application/problem+json');
    expect(over.json()).toMatchObject({ status: 429, code: 'rate_limited' });
    const retryAfter = Number(over.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    expect((await get({ authorization: `Bearer ${s.readToken}` })).statusCode).toBe(200);
    // Health and the OpenAPI document are exempt.
    expect((await get(auth, '/api/v1/health')).statusCode).toBe(200);
    expect((await get(auth, '/api/v1/openapi.json')).statusCode).toBe(200);
  });

  it('requests without a valid token are limited per address by SITEPLANE_RATE_LIMIT_ADDRESS, made-up tokens included', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await get({ authorization: `Bearer sp_made_up_${i}` })).statusCode);
    expect(statuses).toEqual([401, 401, 401, 429]);
    const res = await get({});
    expect(res.statusCode).toBe(429);
    expect(res.headers['retry-after']).toMatch(/^\d+$/);
    // A valid token is counted on its own budget, not the address's.
    expect((await get({ authorization: `Bearer ${s.otherTenantToken}` })).statusCode).toBe(200);
  });

  it('0 turns a limit off', async () => {
    const t = await startTestService({ env: { SITEPLANE_RATE_LIMIT: '0', SITEPLANE_RATE_LIMIT_ADDRESS: '0' } });
    try {
      for (let i = 0; i < 50; i++) expect((await t.app.inject({ method: 'GET', url: '/api/v1/servers' })).statusCode).toBe(401);
    } finally {
      await t.stop();
    }
  });

  it('behind a proxy in SITEPLANE_TRUSTED_PROXIES each client is counted by the address X-Forwarded-For names; elsewhere the header is not believed', async () => {
    const t = await startTestService({
      env: { SITEPLANE_RATE_LIMIT_ADDRESS: '2', SITEPLANE_TRUSTED_PROXIES: '10.0.0.5, 192.0.2.0/24' },
      clock,
    });
    const untrusted = await startTestService({ env: { SITEPLANE_RATE_LIMIT_ADDRESS: '2' }, clock });
    const from = (service: TestService, remoteAddress: string, forwardedFor: string) =>
      service.app
        .inject({ method: 'GET', url: '/api/v1/servers', headers: { 'x-forwarded-for': forwardedFor }, remoteAddress })
        .then((res) => res.statusCode);
    try {
      // Through the proxy: one budget per client address.
      expect([await from(t, '10.0.0.5', '203.0.113.1'), await from(t, '10.0.0.5', '203.0.113.1')]).toEqual([401, 401]);
      expect(await from(t, '10.0.0.5', '203.0.113.1')).toBe(429);
      expect(await from(t, '10.0.0.5', '203.0.113.2')).toBe(401);
      // A client that sends its own X-Forwarded-For gets the proxy's appended after it: still counted as itself.
      expect(await from(t, '10.0.0.5', '198.51.100.99, 203.0.113.1')).toBe(429);
      // Through two trusted proxies (a range), the first untrusted address from the right.
      expect(await from(t, '192.0.2.10', '203.0.113.1, 10.0.0.5')).toBe(429);
      // Not from a trusted proxy: counted by its own address, whatever it names.
      const direct = [];
      for (const claimed of ['203.0.113.7', '203.0.113.8', '203.0.113.9']) direct.push(await from(t, '198.51.100.1', claimed));
      expect(direct).toEqual([401, 401, 429]);
      // With no trusted proxies (the default) the header is never believed.
      const plain = [];
      for (const claimed of ['203.0.113.7', '203.0.113.8', '203.0.113.9']) plain.push(await from(untrusted, '10.0.0.5', claimed));
      expect(plain).toEqual([401, 401, 429]);
    } finally {
      await t.stop();
      await untrusted.stop();
    }
  });
});
