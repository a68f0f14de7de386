/** waitForTxt against tiny DNS servers on 127.0.0.1, the way DNS_RESOLVERS points it at a test resolver. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForTxt } from '../../src/dns/dns-propagation.js';
import { startTxtDnsServer, type TxtDnsServer } from '../standins/dns/txt-dns-server.js';
import { expectDnsError } from './provider-cases.js';

describe('waitForTxt', () => {
  let first: TxtDnsServer;
  let second: TxtDnsServer;

  beforeAll(async () => {
    first = await startTxtDnsServer();
    second = await startTxtDnsServer();
  });

  afterAll(async () => {
    await first.close();
    await second.close();
  });

  it('resolves once the value appears among the TXT strings of the name', async () => {
    const name = '_acme-challenge.appears.example.com';
    first.setTxt(name, ['some-other-value']);
    const started = Date.now();
    setTimeout(() => first.setTxt(name, ['some-other-value', 'the-token']), 300);
    await waitForTxt(name, 'the-token', { resolvers: [first.address], timeoutMs: 5_000, intervalMs: 50 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('joins a value longer than one 255-byte string', async () => {
    const long = 'x'.repeat(300);
    first.setTxt('long.example.com', [long]);
    await expect(
      waitForTxt('long.example.com.', long, { resolvers: [first.address], timeoutMs: 2_000, intervalMs: 50 }),
    ).resolves.toBeUndefined();
  });

  it('times out with propagation_timeout while the name does not exist', async () => {
    const error = await expectDnsError(
      waitForTxt('_acme-challenge.missing.example.com', 'v', { resolvers: [first.address], timeoutMs: 300, intervalMs: 50 }),
      'propagation_timeout',
      [],
    );
    expect(error.message).toContain(first.address);
  });

  it('waits for every resolver, naming those that lack the value', async () => {
    const name = '_acme-challenge.partial.example.com';
    first.setTxt(name, ['v']);
    second.setTxt(name, []);
    const error = await expectDnsError(
      waitForTxt(name, 'v', { resolvers: [first.address, second.address], timeoutMs: 300, intervalMs: 50 }),
      'propagation_timeout',
      [],
    );
    expect(error.message).toContain(second.address);
    expect(error.message).not.toContain(first.address);

    second.setTxt(name, ['v']);
    await expect(
      waitForTxt(name, 'v', { resolvers: [first.address, second.address], timeoutMs: 2_000, intervalMs: 50 }),
    ).resolves.toBeUndefined();
  });
});
