// HTTP-01 against Pebble: the CA fetches the token from 127.0.0.1:5002 after resolving the name
// through the mock DNS. Every test that needs port 5002 lives in this file, so files running in
// parallel never compete for it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAccountKey } from '../../../src/tls/account.js';
import { issueCertificate } from '../../../src/tls/acme-issuer.js';
import { dns01HooksFor } from '../../../src/tls/dns01-provider.js';
import { TlsError } from '../../../src/tls/errors.js';
import { type ChallengeServer, startChallengeServer } from './challenge-server.js';
import { MockDnsProvider } from './mock-dns-provider.js';
import { DIRECTORY_URL, MOCK_DNS, mockDns, pebbleCaPem, pebbleRoot, requirePebble, unique } from './pebble.js';
import { expectValidChain } from './verify-chain.js';

let server: ChallengeServer;
let caCertsPem: string;

beforeAll(async () => {
  await requirePebble();
  caCertsPem = pebbleCaPem();
  server = await startChallengeServer(5002);
});

afterAll(async () => {
  await server?.close();
});

async function options(domains: string[]) {
  return {
    directoryUrl: DIRECTORY_URL,
    // A fresh account per issuance: Pebble may reuse an account's valid authorizations, which
    // would let a test pass without the challenge it is about.
    accountKeyPem: await generateAccountKey(),
    email: 'ops@example.com',
    domains,
    caCertsPem,
    http01: server.hooks,
    pollIntervalMs: 200,
  };
}

describe('HTTP-01 with Pebble', () => {
  it('issues a certificate for site1.test that chains to Pebble’s root, and takes the token down', async () => {
    await mockDns.addA('site1.test', ['127.0.0.1']);
    const lines: string[] = [];
    const issued = await issueCertificate({
      ...(await options(['site1.test'])),
      challenge: 'http-01',
      pointsTo: { addresses: ['127.0.0.1'], resolvers: [MOCK_DNS] },
      log: (line) => lines.push(line),
      trace: (line) => lines.push(line),
    });

    expect(issued.domains).toEqual(['site1.test']);
    expect(issued.leftovers).toEqual([]);
    expect(issued.accountUrl).toMatch(/^https:\/\/127\.0\.0\.1:14000\//);
    expect(issued.expiresAt.getTime()).toBeGreaterThan(Date.now());
    expectValidChain(issued, await pebbleRoot());
    // Pebble really fetched the token, and it is gone now.
    expect(server.served.length).toBeGreaterThan(0);
    expect(server.removed).toContain(server.served[0]);
    expect(server.published.size).toBe(0);
    // Progress is logged; keys never are.
    expect(lines.some((l) => l.includes('site1.test validated'))).toBe(true);
    expect(lines.join('\n')).not.toContain('PRIVATE KEY');
    expect(lines.join('\n')).not.toContain(issued.privateKeyPem.split('\n')[1]);
  });

  it('proves a wildcard with DNS-01 and the bare domain with HTTP-01 in one order', async () => {
    const base = `${unique('mix')}.test`;
    await mockDns.addA(base, ['127.0.0.1']);
    const provider = new MockDnsProvider();
    const servedBefore = server.served.length;
    const issued = await issueCertificate({
      ...(await options([`*.${base}`, base])),
      challenge: 'http-01',
      dns01: dns01HooksFor(provider, { resolvers: [MOCK_DNS], intervalMs: 100, visibleWithinMs: 10_000 }),
    });
    expect(issued.domains.sort()).toEqual([`*.${base}`, base].sort());
    expect(provider.created.map((r) => r.name)).toEqual([`_acme-challenge.${base}`]);
    expect(provider.deleted).toHaveLength(1);
    expect(server.served.length).toBeGreaterThan(servedBefore);
    expectValidChain(issued, await pebbleRoot());
  });

  it('fails with challenge_failed naming the domain when the CA cannot fetch the token, and still cleans up', async () => {
    const domain = `${unique('away')}.test`;
    // Nothing listens on 127.0.0.2:5002; without the DNS pre-check the CA finds that out itself.
    await mockDns.addA(domain, ['127.0.0.2']);
    const removedBefore = server.removed.length;
    const error = await issueCertificate({ ...(await options([domain])), challenge: 'http-01' }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TlsError);
    expect((error as TlsError).kind).toBe('challenge_failed');
    expect((error as TlsError).details.domain).toBe(domain);
    expect((error as TlsError).message).toContain(domain);
    expect((error as TlsError).details.acmeProblem).toBe('urn:ietf:params:acme:error:connection');
    expect(server.removed.length).toBe(removedBefore + 1);
    expect(server.published.size).toBe(0);
  });

  it('reports a token that could not be published (nginx refused it) and still removes it', async () => {
    const domain = `${unique('broken')}.test`;
    await mockDns.addA(domain, ['127.0.0.1']);
    const removed: string[] = [];
    const error = await issueCertificate({
      ...(await options([domain])),
      challenge: 'http-01',
      http01: {
        publish: async () => {
          throw new Error('nginx -t failed');
        },
        remove: async (token) => {
          removed.push(token);
        },
      },
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(TlsError);
    expect((error as TlsError).kind).toBe('challenge_failed');
    expect((error as TlsError).message).toBe(`Could not publish the HTTP-01 token for ${domain}: nginx -t failed`);
    // A publish that failed half-way may have written the token: it is removed all the same.
    expect(removed).toHaveLength(1);
  });
});
