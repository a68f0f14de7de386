/**
 * One contract for the four DNS adapters (issue 4), each run through its real client code (fetch or
 * the AWS SDK) against a stand-in of the provider's HTTP API on 127.0.0.1.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsProvider } from '../../src/dns/create-dns-provider.js';
import type { DnsCredentials, DnsProvider, DnsProviderName } from '../../src/dns/provider.js';
import type { DnsStandin, StandinRecord } from '../standins/dns/standin-server.js';
import { closedPortUrl, expectDnsError, fillerZones, type ProviderCase, providerCases, secretsOf } from './provider-cases.js';

const ZONES = ['example.com', 'sub.example.com', 'example.net'];

describe.each(providerCases)('$name adapter', (c: ProviderCase) => {
  let standin: DnsStandin<DnsCredentials[DnsProviderName]>;
  let dns: DnsProvider;
  let secrets: string[];
  const changes: StandinRecord[][] = [];
  const txt = (records: StandinRecord[], name: string) =>
    records
      .filter((r) => r.type === 'TXT' && r.name === name)
      .map((r) => r.value)
      .sort();

  beforeAll(async () => {
    // The zones under test come after a thousand others, so listing providers must page to find them.
    standin = await c.start({ zones: [...fillerZones(1100), ...ZONES], onChange: (records) => changes.push(records) });
    dns = createDnsProvider(c.name, standin.credentials, { apiBase: standin.url });
    secrets = secretsOf(standin.credentials);
  });

  afterAll(async () => {
    await standin.close();
  });

  it('verifies good credentials', async () => {
    await expect(dns.verify()).resolves.toBeUndefined();
  });

  it('reports wrong credentials as auth_failed, naming neither the wrong nor the right secret', async () => {
    const wrong = c.wrong(standin.credentials as never);
    const bad = createDnsProvider(c.name, wrong, { apiBase: standin.url });
    await expectDnsError(bad.verify(), 'auth_failed', [...secrets, ...secretsOf(wrong)]);
    await expectDnsError(bad.findZone('www.example.com'), 'auth_failed', [...secrets, ...secretsOf(wrong)]);
  });

  it('finds the longest zone the account hosts', async () => {
    expect(await dns.findZone('_acme-challenge.www.sub.example.com')).toBe('sub.example.com');
    expect(await dns.findZone('sub.example.com')).toBe('sub.example.com');
    expect(await dns.findZone('_acme-challenge.example.com')).toBe('example.com');
    expect(await dns.findZone('WWW.Example.COM.')).toBe('example.com');
  });

  it('reports a name no zone contains as zone_not_found', async () => {
    await expectDnsError(dns.findZone('www.example.org'), 'zone_not_found', secrets);
    await expectDnsError(
      dns.createRecord({ name: '_acme-challenge.example.org', type: 'TXT', value: 'x' }),
      'zone_not_found',
      secrets,
    );
  });

  it('creates and deletes a DNS-01 TXT record; deleting twice is fine', async () => {
    const name = '_acme-challenge.example.com';
    const ref = await dns.createRecord({ name, type: 'TXT', value: 'gfj9Xq-Lc5sZ0xS4uQ1sT9rXcA5HnJm0P2kLw7vYb3E' });
    expect(ref).toMatchObject({ zone: 'example.com', name, type: 'TXT', value: 'gfj9Xq-Lc5sZ0xS4uQ1sT9rXcA5HnJm0P2kLw7vYb3E' });
    expect(txt(standin.records(), name)).toEqual(['gfj9Xq-Lc5sZ0xS4uQ1sT9rXcA5HnJm0P2kLw7vYb3E']);
    expect(txt(changes.at(-1) ?? [], name)).toEqual(['gfj9Xq-Lc5sZ0xS4uQ1sT9rXcA5HnJm0P2kLw7vYb3E']);

    await dns.deleteRecord(ref);
    expect(txt(standin.records(), name)).toEqual([]);
    expect(txt(changes.at(-1) ?? [], name)).toEqual([]);
    await expect(dns.deleteRecord(ref)).resolves.toBeUndefined();
  });

  it('keeps two values of one name side by side (a wildcard and its apex), also when written at once', async () => {
    const name = '_acme-challenge.sub.example.com';
    const [first, second] = await Promise.all([
      dns.createRecord({ name, type: 'TXT', value: 'value-for-the-apex' }),
      dns.createRecord({ name, type: 'TXT', value: 'value-for-the-wildcard' }),
    ]);
    expect(txt(standin.records(), name)).toEqual(['value-for-the-apex', 'value-for-the-wildcard']);

    await dns.deleteRecord(first!);
    expect(txt(standin.records(), name)).toEqual(['value-for-the-wildcard']);
    await dns.deleteRecord(second!);
    expect(txt(standin.records(), name)).toEqual([]);
  });

  it('returns the existing record when the same one is created again (a retried step)', async () => {
    const name = '_acme-challenge.retry.example.com';
    const first = await dns.createRecord({ name, type: 'TXT', value: 'same-value' });
    const again = await dns.createRecord({ name, type: 'TXT', value: 'same-value' });
    expect(again).toEqual(first);
    expect(txt(standin.records(), name)).toEqual(['same-value']);
    await dns.deleteRecord(again);
  });

  it('creates and deletes A records of a temporary domain, below and at the apex', async () => {
    const below = await dns.createRecord({ name: 'preview-1.example.net', type: 'A', value: '203.0.113.10' });
    const apex = await dns.createRecord({ name: 'example.net', type: 'A', value: '203.0.113.11' });
    const a = () =>
      standin
        .records()
        .filter((r) => r.type === 'A')
        .map((r) => `${r.name} ${r.value}`)
        .sort();
    expect(a()).toEqual(['example.net 203.0.113.11', 'preview-1.example.net 203.0.113.10']);
    expect(below).toMatchObject({ zone: 'example.net', name: 'preview-1.example.net', type: 'A', value: '203.0.113.10' });

    await dns.deleteRecord(below);
    await dns.deleteRecord(apex);
    expect(a()).toEqual([]);
  });

  it("passes the provider's own message on as provider_error", async () => {
    const error = await expectDnsError(
      dns.createRecord({ name: 'bad.example.net', type: 'A', value: 'not-an-ip' }),
      'provider_error',
      secrets,
    );
    expect(error.message).toMatch(/ipv4/i);
    expect(error.message.startsWith(`${c.name}: `)).toBe(true);
  });

  it('reports a rate limit as rate_limited with the seconds to wait', async () => {
    standin.rateLimit(5, 7);
    try {
      const error = await expectDnsError(dns.verify(), 'rate_limited', secrets);
      expect(error.retryAfterSeconds).toBe(c.retryAfter);
    } finally {
      standin.rateLimit(0, 0);
    }
  });

  it('reports a provider it cannot connect to as unreachable', async () => {
    const down = createDnsProvider(c.name, standin.credentials, { apiBase: await closedPortUrl(), timeoutMs: 2_000 });
    await expectDnsError(down.verify(), 'unreachable', secrets);
  });
});
