/** What only Route 53 has: record sets shared by values, private zones, changes that sync later. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDnsProvider } from '../../src/dns/create-dns-provider.js';
import type { DnsProvider } from '../../src/dns/provider.js';
import { type Route53Standin, startRoute53Standin } from '../standins/dns/route53.js';
import { expectDnsError, secretsOf } from './provider-cases.js';

describe('Route 53 adapter', () => {
  let standin: Route53Standin;
  let dns: DnsProvider;
  let interleave: (() => void) | undefined;
  const txt = (name: string) =>
    standin
      .records()
      .filter((r) => r.name === name && r.type === 'TXT')
      .map((r) => r.value)
      .sort();

  beforeAll(async () => {
    standin = await startRoute53Standin({
      zones: ['example.com'],
      // A private zone of the same name, listed first: records must still go to the public one.
      privateZones: ['example.com', 'internal.example.com'],
      syncAfterPolls: 3,
      beforeChange: () => {
        const run = interleave;
        interleave = undefined;
        run?.();
      },
    });
    dns = createDnsProvider('aws', standin.credentials, { apiBase: standin.url });
  });

  afterAll(async () => {
    await standin.close();
  });

  it('skips private hosted zones, also when one is the longer match', async () => {
    expect(await dns.findZone('_acme-challenge.www.internal.example.com')).toBe('example.com');
    const ref = await dns.createRecord({ name: '_acme-challenge.example.com', type: 'TXT', value: 'public' });
    expect(standin.records()).toEqual([expect.objectContaining({ name: '_acme-challenge.example.com', value: 'public' })]);
    expect(ref.zoneId).toMatch(/^Z[0-9A-F]+$/);
    await dns.deleteRecord(ref);
  });

  it('keeps values other tools put in the same set, and their TTL', async () => {
    standin.putSet('example.com', { name: 'keep.example.com', type: 'TXT', ttl: 300, values: ['"v=spf1 -all"'] });
    const ref = await dns.createRecord({ name: 'keep.example.com', type: 'TXT', value: 'ours' });
    expect(txt('keep.example.com')).toEqual(['ours', 'v=spf1 -all']);
    expect(standin.records().every((r) => r.ttl === 300)).toBe(true);
    await dns.deleteRecord(ref);
    expect(txt('keep.example.com')).toEqual(['v=spf1 -all']);
  });

  it('reads again and merges when another writer changes the set between read and write', async () => {
    interleave = () => standin.putSet('example.com', { name: 'race.example.com', type: 'TXT', ttl: 60, values: ['"theirs"'] });
    const ref = await dns.createRecord({ name: 'race.example.com', type: 'TXT', value: 'ours' });
    expect(txt('race.example.com')).toEqual(['ours', 'theirs']);

    interleave = () =>
      standin.putSet('example.com', {
        name: 'race.example.com',
        type: 'TXT',
        ttl: 60,
        values: ['"ours"', '"theirs"', '"third"'],
      });
    await dns.deleteRecord(ref);
    expect(txt('race.example.com')).toEqual(['theirs', 'third']);
  });

  it('waits until the change is INSYNC when asked to', async () => {
    const waiting = createDnsProvider('aws', standin.credentials, {
      apiBase: standin.url,
      waitForSync: { timeoutMs: 5_000, intervalMs: 10 },
    });
    const before = standin.requests.length;
    const ref = await waiting.createRecord({ name: 'sync.example.com', type: 'A', value: '192.0.2.7' });
    const polls = standin.requests.slice(before).filter((r) => r.startsWith('GET /2013-04-01/change/'));
    expect(polls).toHaveLength(3);
    await waiting.deleteRecord(ref);
  });

  it('gives up waiting for INSYNC with propagation_timeout', async () => {
    const impatient = createDnsProvider('aws', standin.credentials, {
      apiBase: standin.url,
      waitForSync: { timeoutMs: 30, intervalMs: 20 },
    });
    await expectDnsError(
      impatient.createRecord({ name: 'slow.example.com', type: 'A', value: '192.0.2.8' }),
      'propagation_timeout',
      secretsOf(standin.credentials),
    );
  });

  it('names an unknown access key as auth_failed', async () => {
    const stranger = createDnsProvider(
      'aws',
      { accessKeyId: 'AKIAUNKNOWN0000000', secretAccessKey: standin.credentials.secretAccessKey },
      { apiBase: standin.url },
    );
    const error = await expectDnsError(stranger.verify(), 'auth_failed', secretsOf(standin.credentials));
    expect(error.message).toContain('InvalidClientTokenId');
  });
});
