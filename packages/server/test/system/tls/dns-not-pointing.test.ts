// The DNS check before HTTP-01, through the mock DNS as DNS_RESOLVERS: the failure users hit
// most is reported as dns_not_pointing before any request reaches the CA.
import { beforeAll, describe, expect, it } from 'vitest';
import { generateAccountKey } from '../../../src/tls/account.js';
import { issueCertificate } from '../../../src/tls/acme-issuer.js';
import { TlsError } from '../../../src/tls/errors.js';
import { assertResolvesTo, resolveAddresses } from '../../../src/tls/resolves-to.js';
import { DIRECTORY_URL, MOCK_DNS, mockDns, pebbleCaPem, requirePebble, unique } from './pebble.js';

const resolvers = [MOCK_DNS];

async function failure(promise: Promise<unknown>): Promise<TlsError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TlsError);
  return error as TlsError;
}

beforeAll(requirePebble);

describe('dns_not_pointing', () => {
  it('stops issuance when the domain resolves elsewhere, before publishing anything or calling the CA', async () => {
    const domain = `${unique('elsewhere')}.test`;
    await mockDns.addA(domain, ['127.0.0.2']);
    const published: string[] = [];
    const trace: string[] = [];
    const error = await failure(
      issueCertificate({
        directoryUrl: DIRECTORY_URL,
        accountKeyPem: await generateAccountKey(),
        domains: [domain],
        challenge: 'http-01',
        http01: {
          publish: async (token) => {
            published.push(token);
          },
          remove: async () => {},
        },
        pointsTo: { addresses: ['127.0.0.1'], resolvers },
        caCertsPem: pebbleCaPem(),
        trace: (line) => trace.push(line),
      }),
    );
    expect(error.kind).toBe('dns_not_pointing');
    expect(error.details.domain).toBe(domain);
    expect(error.message).toBe(
      `${domain} does not point to this server: it resolves to 127.0.0.2, expected 127.0.0.1. ` +
        'Change its A/AAAA records to 127.0.0.1 (remove 127.0.0.2), wait for DNS to update, then try again.',
    );
    expect(published).toEqual([]);
    expect(trace).toEqual([]);
  });

  it('says so when the domain has no address at all', async () => {
    const domain = `${unique('nowhere')}.test`;
    const error = await failure(assertResolvesTo(domain, ['127.0.0.1'], { resolvers }));
    expect(error.kind).toBe('dns_not_pointing');
    expect(error.message).toMatch(new RegExp(`^${domain.replace(/\./g, '\\.')} has no A or AAAA record\\.`));
  });

  it('fails on a stale AAAA record next to a correct A record', async () => {
    const domain = `${unique('stale-aaaa')}.test`;
    await mockDns.addA(domain, ['127.0.0.1']);
    await mockDns.addAaaa(domain, ['2001:db8::1']);
    const error = await failure(assertResolvesTo(domain, ['127.0.0.1'], { resolvers }));
    expect(error.message).toContain('remove 2001:db8::1');
  });

  it('passes when every address is the server’s, however IPv6 is written', async () => {
    const domain = `${unique('dual')}.test`;
    await mockDns.addA(domain, ['127.0.0.1']);
    await mockDns.addAaaa(domain, ['::1']);
    expect((await resolveAddresses(domain, { resolvers })).sort()).toEqual(['127.0.0.1', '::1']);
    await expect(assertResolvesTo(domain, ['127.0.0.1', '0:0:0:0:0:0:0:1'], { resolvers })).resolves.toBeUndefined();
  });

  it('reports an unreachable resolver as a failed lookup', async () => {
    const error = await failure(assertResolvesTo('site1.test', ['127.0.0.1'], { resolvers: ['127.0.0.1:1'], timeoutMs: 300 }));
    expect(error.kind).toBe('dns_not_pointing');
    expect(error.message).toMatch(/^Could not look up site1\.test \(\w+ from 127\.0\.0\.1:1\)/);
  });
});
