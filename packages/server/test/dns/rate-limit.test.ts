/**
 * Short rate limits are waited out inside the HTTP adapters (Porkbun allows about one request a
 * second and a record change takes several); longer ones go straight back to the caller's job.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsProvider } from '../../src/dns/create-dns-provider.js';
import type { DnsCredentials } from '../../src/dns/provider.js';
import { startCloudflareStandin } from '../standins/dns/cloudflare.js';
import { startPorkbunStandin } from '../standins/dns/porkbun.js';
import type { DnsStandin } from '../standins/dns/standin-server.js';
import { expectDnsError } from './provider-cases.js';

describe('rate limits', () => {
  let cloudflare: DnsStandin<DnsCredentials['cloudflare']>;
  let porkbun: DnsStandin<DnsCredentials['porkbun']>;

  beforeAll(async () => {
    cloudflare = await startCloudflareStandin({ zones: ['example.com'] });
    porkbun = await startPorkbunStandin({ zones: ['example.com'] });
  });

  afterAll(async () => {
    await cloudflare.close();
    await porkbun.close();
  });

  it('waits out a Retry-After of a second and repeats the request', async () => {
    cloudflare.rateLimit(1, 1);
    const started = Date.now();
    await createDnsProvider('cloudflare', cloudflare.credentials, { apiBase: cloudflare.url }).verify();
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(cloudflare.requests.filter((r) => r.endsWith('/user/tokens/verify'))).toHaveLength(2);
  });

  it("waits out Porkbun's 503 answers, a second each", async () => {
    porkbun.rateLimit(2, 0);
    await expect(createDnsProvider('porkbun', porkbun.credentials, { apiBase: porkbun.url }).verify()).resolves.toBeUndefined();
  });

  it('passes a longer wait on at once', async () => {
    cloudflare.rateLimit(1, 30);
    const started = Date.now();
    const error = await expectDnsError(
      createDnsProvider('cloudflare', cloudflare.credentials, { apiBase: cloudflare.url }).verify(),
      'rate_limited',
      [cloudflare.credentials.apiToken],
    );
    expect(error.retryAfterSeconds).toBe(30);
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('waits no more often than told to', async () => {
    porkbun.rateLimit(2, 0);
    const once = createDnsProvider('porkbun', porkbun.credentials, { apiBase: porkbun.url, rateLimitRetries: 1 });
    await expectDnsError(once.verify(), 'rate_limited', Object.values(porkbun.credentials));
  });
});
