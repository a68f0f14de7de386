// External account binding (ZeroSSL-style) against the Pebble instance that requires it.
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureAccount } from '../../../src/tls/account.js';
import { issueCertificate } from '../../../src/tls/acme-issuer.js';
import { dns01HooksFor } from '../../../src/tls/dns01-provider.js';
import { TlsError } from '../../../src/tls/errors.js';
import { MockDnsProvider } from './mock-dns-provider.js';
import {
  EAB_DIRECTORY_URL,
  EAB_MANAGEMENT_URL,
  eabCredentials,
  MOCK_DNS,
  pebbleCaPem,
  pebbleRoot,
  requirePebble,
  unique,
} from './pebble.js';
import { expectValidChain } from './verify-chain.js';

async function failure(promise: Promise<unknown>): Promise<TlsError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TlsError);
  return error as TlsError;
}

beforeAll(requirePebble);

describe('EAB account with Pebble', () => {
  it('refuses an account without EAB, with a message that says what is missing', async () => {
    const error = await failure(
      ensureAccount({ directoryUrl: EAB_DIRECTORY_URL, caCertsPem: pebbleCaPem(), email: 'ops@example.com' }),
    );
    expect(error.kind).toBe('account_failed');
    expect(error.details.acmeProblem).toBe('urn:ietf:params:acme:error:externalAccountRequired');
    expect(error.message).toContain(EAB_DIRECTORY_URL);
    expect(error.message).toContain('external account binding');
  });

  it('refuses an EAB whose HMAC key is wrong', async () => {
    const { kid } = eabCredentials();
    const wrong = Buffer.alloc(32, 7).toString('base64url');
    const error = await failure(
      ensureAccount({
        directoryUrl: EAB_DIRECTORY_URL,
        caCertsPem: pebbleCaPem(),
        externalAccountBinding: { kid, hmacKey: wrong },
      }),
    );
    expect(error.kind).toBe('account_failed');
    expect(error.message).not.toContain(wrong);
  });

  it('creates the account with EAB, finds it again by key alone, and issues with it', async () => {
    const caCertsPem = pebbleCaPem();
    const created = await ensureAccount({
      directoryUrl: EAB_DIRECTORY_URL,
      caCertsPem,
      email: 'ops@example.com',
      externalAccountBinding: eabCredentials(),
    });
    expect(created.created).toBe(true);
    expect(created.accountUrl).toMatch(/^https:\/\/127\.0\.0\.1:14001\//);
    expect(created.accountKeyPem).toContain('PRIVATE KEY');

    // The stored key is enough afterwards: no new account, the same URL.
    const again = await ensureAccount({ directoryUrl: EAB_DIRECTORY_URL, caCertsPem, accountKeyPem: created.accountKeyPem });
    expect(again).toEqual({ ...created, created: false });

    const base = `${unique('zerossl-like')}.test`;
    const issued = await issueCertificate({
      directoryUrl: EAB_DIRECTORY_URL,
      accountKeyPem: created.accountKeyPem,
      externalAccountBinding: eabCredentials(),
      domains: [base],
      challenge: 'dns-01',
      dns01: dns01HooksFor(new MockDnsProvider(), { resolvers: [MOCK_DNS], intervalMs: 100, visibleWithinMs: 10_000 }),
      caCertsPem,
      pollIntervalMs: 200,
    });
    expect(issued.accountUrl).toBe(created.accountUrl);
    expectValidChain(issued, await pebbleRoot(EAB_MANAGEMENT_URL));
  });
});
