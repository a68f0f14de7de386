// DNS-01 against Pebble: TXT records go to pebble-challtestsrv's mock DNS through a DnsProvider,
// the same adapter a stored DNS profile uses; Pebble resolves them through that mock DNS.
import { Resolver } from 'node:dns/promises';
import { beforeAll, describe, expect, it } from 'vitest';
import type { DnsRecordRef } from '../../../src/dns/provider.js';
import { generateAccountKey } from '../../../src/tls/account.js';
import { issueCertificate } from '../../../src/tls/acme-issuer.js';
import { siteCertificateNames } from '../../../src/tls/certificate-names.js';
import { dns01HooksFor } from '../../../src/tls/dns01-provider.js';
import { TlsError } from '../../../src/tls/errors.js';
import { MockDnsProvider } from './mock-dns-provider.js';
import { DIRECTORY_URL, MOCK_DNS, pebbleCaPem, pebbleRoot, requirePebble, unique } from './pebble.js';
import { expectValidChain } from './verify-chain.js';

const visibility = { resolvers: [MOCK_DNS], intervalMs: 100, visibleWithinMs: 10_000 };

async function txtValues(name: string): Promise<string[]> {
  const resolver = new Resolver();
  resolver.setServers([MOCK_DNS]);
  return resolver.resolveTxt(name).then(
    (records) => records.map((chunks) => chunks.join('')),
    () => [],
  );
}

async function failure(promise: Promise<unknown>): Promise<TlsError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TlsError);
  return error as TlsError;
}

beforeAll(requirePebble);

describe('DNS-01 wildcard with Pebble', () => {
  it('issues *.wild.test + wild.test + www.wild.test and removes every TXT record', async () => {
    const provider = new MockDnsProvider();
    const names = siteCertificateNames('wild.test', { wildcard: true, includeWww: true });
    const issued = await issueCertificate({
      directoryUrl: DIRECTORY_URL,
      accountKeyPem: await generateAccountKey(),
      email: 'ops@example.com',
      domains: names,
      challenge: 'dns-01',
      dns01: dns01HooksFor(provider, visibility),
      caCertsPem: pebbleCaPem(),
      pollIntervalMs: 200,
    });

    expect([...issued.domains].sort()).toEqual(['*.wild.test', 'wild.test', 'www.wild.test']);
    expectValidChain(issued, await pebbleRoot());
    // The wildcard and the bare name share one TXT name, with two values side by side.
    expect(provider.created.map((r) => r.name).sort()).toEqual([
      '_acme-challenge.wild.test',
      '_acme-challenge.wild.test',
      '_acme-challenge.www.wild.test',
    ]);
    expect(provider.created.every((r) => r.type === 'TXT' && /^[A-Za-z0-9_-]{43}$/.test(r.value))).toBe(true);
    expect(provider.deleted).toHaveLength(3);
    expect(await txtValues('_acme-challenge.wild.test')).toEqual([]);
    expect(await txtValues('_acme-challenge.www.wild.test')).toEqual([]);
  });

  it('reports dns_provider_failed when the provider refuses the record, and removes what it did create', async () => {
    const base = `${unique('refused')}.test`;
    const provider = new MockDnsProvider();
    let calls = 0;
    const hooks = dns01HooksFor(provider, visibility);
    const error = await failure(
      issueCertificate({
        directoryUrl: DIRECTORY_URL,
        accountKeyPem: await generateAccountKey(),
        domains: [`*.${base}`, base],
        challenge: 'dns-01',
        dns01: {
          ...hooks,
          // The first record goes through; the provider rejects the second.
          setTxt: async (fqdn, value) => {
            calls += 1;
            if (calls === 2) throw new Error('403 Forbidden: token lacks Zone.DNS edit');
            return hooks.setTxt(fqdn, value);
          },
        },
        caCertsPem: pebbleCaPem(),
        pollIntervalMs: 200,
      }),
    );
    expect(error.kind).toBe('dns_provider_failed');
    expect(error.message).toContain(`_acme-challenge.${base}`);
    expect(error.message).toContain('token lacks Zone.DNS edit');
    expect(provider.created).toHaveLength(1);
    expect(provider.deleted).toEqual(provider.created);
    expect(await txtValues(`_acme-challenge.${base}`)).toEqual([]);
  });

  it('reports dns_provider_failed when the record never becomes visible, without asking the CA to look', async () => {
    const base = `${unique('invisible')}.test`;
    const removed: string[] = [];
    const error = await failure(
      issueCertificate({
        directoryUrl: DIRECTORY_URL,
        accountKeyPem: await generateAccountKey(),
        domains: [`*.${base}`],
        challenge: 'dns-01',
        // A provider that accepts the record but publishes it nowhere the resolvers look.
        dns01: {
          ...dns01HooksFor(new MockDnsProvider(), { ...visibility, visibleWithinMs: 600 }),
          setTxt: async (fqdn) => fqdn,
          removeTxt: async (handle) => {
            removed.push(handle as string);
          },
        },
        caCertsPem: pebbleCaPem(),
      }),
    );
    expect(error.kind).toBe('dns_provider_failed');
    expect(error.message).toBe(
      `The TXT record _acme-challenge.${base} did not become visible within 1 s (127.0.0.1:8053: no TXT record); check the DNS profile manages this zone.`,
    );
    expect(removed).toEqual([`_acme-challenge.${base}`]);
  });

  it('lists records it could not remove, without failing an issued certificate', async () => {
    const base = `${unique('sticky')}.test`;
    const provider = new MockDnsProvider();
    const hooks = dns01HooksFor(provider, visibility);
    const issued = await issueCertificate({
      directoryUrl: DIRECTORY_URL,
      accountKeyPem: await generateAccountKey(),
      domains: [base],
      challenge: 'dns-01',
      dns01: {
        ...hooks,
        removeTxt: async (_ref: DnsRecordRef) => {
          throw new Error('provider timeout');
        },
      },
      caCertsPem: pebbleCaPem(),
      pollIntervalMs: 200,
    });
    expect(issued.domains).toEqual([base]);
    expect(issued.leftovers).toEqual([`TXT record _acme-challenge.${base} for ${base}`]);
    await provider.deleteRecord(provider.created[0]!);
  });
});
