// The renewal decision on a certificate Pebble really issued, driven by a clock the test moves.
import { beforeAll, describe, expect, it } from 'vitest';
import { generateAccountKey } from '../../../src/tls/account.js';
import { type IssuedCertificate, issueCertificate } from '../../../src/tls/acme-issuer.js';
import { dns01HooksFor } from '../../../src/tls/dns01-provider.js';
import { parseCertificate, renewalDecision } from '../../../src/tls/renewal.js';
import { MockDnsProvider } from './mock-dns-provider.js';
import { DIRECTORY_URL, MOCK_DNS, pebbleCaPem, requirePebble, unique } from './pebble.js';

const DAY = 86_400_000;
let issued: IssuedCertificate;
let domain: string;

beforeAll(async () => {
  await requirePebble();
  domain = `${unique('renew')}.test`;
  issued = await issueCertificate({
    directoryUrl: DIRECTORY_URL,
    accountKeyPem: await generateAccountKey(),
    domains: [domain],
    challenge: 'dns-01',
    dns01: dns01HooksFor(new MockDnsProvider(), { resolvers: [MOCK_DNS], intervalMs: 100, visibleWithinMs: 10_000 }),
    caCertsPem: pebbleCaPem(),
    pollIntervalMs: 200,
  });
});

describe('renewal of an issued certificate', () => {
  it('parses what the issuer reported', () => {
    const facts = parseCertificate(issued.fullChainPem);
    expect(facts.notAfter).toEqual(issued.expiresAt);
    expect(facts.domains).toEqual([domain]);
    expect(facts.notBefore.getTime()).toBeLessThanOrEqual(Date.now());
  });

  it('is not due until 30 days before expiry, then due, then expired', () => {
    const cert = parseCertificate(issued.certificatePem);
    const wanted = [domain];
    const at = (ms: number) => renewalDecision(cert, { domains: wanted, now: new Date(ms) });
    const notAfter = cert.notAfter.getTime();

    expect(at(Date.now())).toEqual({ due: false, dueAt: new Date(notAfter - 30 * DAY) });
    expect(at(notAfter - 30 * DAY - 1).due).toBe(false);
    expect(at(notAfter - 30 * DAY)).toMatchObject({ due: true, reason: 'expiring' });
    expect(at(notAfter - DAY)).toMatchObject({ due: true, reason: 'expiring' });
    expect(at(notAfter)).toMatchObject({ due: true, reason: 'expired' });
  });

  it('is due at once when the site now wants www too', () => {
    const cert = parseCertificate(issued.certificatePem);
    expect(renewalDecision(cert, { domains: [domain, `www.${domain}`], now: new Date() })).toMatchObject({
      due: true,
      reason: 'names_changed',
    });
  });
});
