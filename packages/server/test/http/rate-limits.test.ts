import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, TEST_DB, type TestService } from '../support/test-service.js';

describe(`rate limits per token and per address on ${TEST_DB} (ARCHITECTURE §2 "Errors": 429 with Retry-After)`, () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService({ env: { SITEPLANE_RATE_LIMIT: '5', SITEPLANE_RATE_LIMIT_ADDRESS: '3' } });
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
});
