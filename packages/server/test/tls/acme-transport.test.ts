import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ensureAccount, generateAccountKey } from '../../src/tls/account.js';
import { TlsError } from '../../src/tls/errors.js';
import { type AccountAnswer, type FakeCa, makeTestCa, startFakeCa, type TestCa } from './fake-ca.js';

// The transport around acme-client, against a real HTTPS server on loopback: extra CA trust,
// per-call isolation, rate limits reported without sleeping, network failures made readable.
let ca: TestCa;
let accountKeyPem: string;
const servers: FakeCa[] = [];

beforeAll(async () => {
  ca = makeTestCa();
  accountKeyPem = await generateAccountKey();
});

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function fakeCa(answer: () => AccountAnswer): Promise<FakeCa> {
  const server = await startFakeCa(ca, answer);
  servers.push(server);
  return server;
}

async function failure(promise: Promise<unknown>): Promise<TlsError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TlsError);
  return error as TlsError;
}

const rateLimited: AccountAnswer = {
  status: 429,
  headers: { 'Retry-After': '3600' },
  body: { type: 'urn:ietf:params:acme:error:rateLimited', detail: 'too many new accounts from this address', status: 429 },
};

describe('ACME transport', () => {
  it('trusts the extra CA bundle, and reports a rate limit at once instead of sleeping through Retry-After', async () => {
    const server = await fakeCa(() => rateLimited);
    const started = Date.now();
    const error = await failure(ensureAccount({ directoryUrl: server.directoryUrl, accountKeyPem, caCertsPem: ca.caPem }));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.kind).toBe('rate_limited');
    expect(error.details.retryAfterSeconds).toBe(3600);
    expect(error.message).toContain('too many new accounts from this address');
    expect(server.requests.filter((r) => r === 'POST /acct')).toHaveLength(1);
  });

  it('without the bundle, the CA is unreachable with a hint about ACME_CA_CERTS', async () => {
    const server = await fakeCa(() => rateLimited);
    const error = await failure(ensureAccount({ directoryUrl: server.directoryUrl, accountKeyPem, retries: 0 }));
    expect(error.kind).toBe('ca_unreachable');
    expect(error.message).toContain('ACME_CA_CERTS');
    expect(server.requests).toEqual([]);
  });

  it('keeps settings per call: with and without the bundle at the same time', async () => {
    const server = await fakeCa(() => rateLimited);
    const [trusted, untrusted] = await Promise.all([
      failure(ensureAccount({ directoryUrl: server.directoryUrl, accountKeyPem, caCertsPem: ca.caPem, retries: 0 })),
      failure(ensureAccount({ directoryUrl: server.directoryUrl, accountKeyPem, retries: 0 })),
    ]);
    expect(trusted.kind).toBe('rate_limited');
    expect(untrusted.kind).toBe('ca_unreachable');
  });

  it('reports a failing CA (5xx) as unreachable after the allowed retries', async () => {
    const server = await fakeCa(() => ({
      status: 503,
      body: { type: 'urn:ietf:params:acme:error:serverInternal', detail: 'down' },
    }));
    const error = await failure(
      ensureAccount({ directoryUrl: server.directoryUrl, accountKeyPem, caCertsPem: ca.caPem, retries: 0 }),
    );
    expect(error.kind).toBe('ca_unreachable');
    expect(error.message).toContain('HTTP 503');
    expect(server.requests.filter((r) => r === 'POST /acct')).toHaveLength(1);
  });

  it('gives up on a CA that accepts the connection and never answers', async () => {
    const server = await fakeCa(() => 'hang');
    const started = Date.now();
    const error = await failure(
      ensureAccount({ directoryUrl: server.directoryUrl, accountKeyPem, caCertsPem: ca.caPem, retries: 0, timeoutMs: 300 }),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(error.kind).toBe('ca_unreachable');
    expect(error.message).toContain('did not answer in time');
  });

  it('reports a closed port as a refused connection', async () => {
    const server = await fakeCa(() => rateLimited);
    const directoryUrl = server.directoryUrl;
    await server.close();
    servers.length = 0;
    const error = await failure(ensureAccount({ directoryUrl, accountKeyPem, caCertsPem: ca.caPem, retries: 0 }));
    expect(error.kind).toBe('ca_unreachable');
    expect(error.message).toContain('refused');
  });
});
