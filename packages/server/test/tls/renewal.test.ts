import { describe, expect, it } from 'vitest';
import { isRenewalDue, parseCertificate, RENEW_BEFORE_DAYS, renewalDecision, renewalDueAt } from '../../src/tls/renewal.js';

// Made with openssl for this test (key discarded): SANs localhost, *.Example.test, example.test
// and IP 127.0.0.1; serial 0x5173; valid 2026-11-26T00:43:54Z .. 2126-11-02T00:43:54Z.
const LEAF = `-----BEGIN CERTIFICATE-----
MIIB1zCCAX6gAwIBAgICUXMwCgYIKoZIzj0EAwIwITEfMB0GA1UEAwwWU2l0ZXBs
YW5lIHVuaXQtdGVzdCBDQTAgFw0yNjExMjYwMDQzNTRaGA8yMTI2MTEwMjAwNDM1
NFowFDESMBAGA1UEAwwJbG9jYWxob3N0MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcD
QgAEWYVcRt9mtvKBzBTjdImvlE2F+zolizzrcSXOYsxFXRHRlxMMl7954qZKseQh
2X7RWBZCQ5gGPRqtX5tY7LAlbKOBsDCBrTA4BgNVHREEMTAvgglsb2NhbGhvc3SC
DiouRXhhbXBsZS50ZXN0ggxleGFtcGxlLnRlc3SHBH8AAAEwDAYDVR0TAQH/BAIw
ADAOBgNVHQ8BAf8EBAMCB4AwEwYDVR0lBAwwCgYIKwYBBQUHAwEwHQYDVR0OBBYE
FGpdaXzmEwRymyo1Hs+ddE8AN9A2MB8GA1UdIwQYMBaAFLKD7QqQkGlR4B+pmliV
FrvxUje4MAoGCCqGSM49BAMCA0cAMEQCIEWC0rhTXOoycKAsBIqWYisneUTe9e9T
y0sTkj2VALEpAiBRD/xnqn6NUAjTPSE+0lO0k6nmJsrNoMuHOKF3Lrsw3Q==
-----END CERTIFICATE-----
`;

// The CA that signed LEAF (no SANs).
const CA = `-----BEGIN CERTIFICATE-----
MIIBqTCCAU+gAwIBAgIUepZpNs9zQSTOzyU04vn1AO2x9HcwCgYIKoZIzj0EAwIw
ITEfMB0GA1UEAwwWU2l0ZXBsYW5lIHVuaXQtdGVzdCBDQTAgFw0yNjExMjYwMDQz
NTRaGA8yMTI2MTEwMjAwNDM1NFowITEfMB0GA1UEAwwWU2l0ZXBsYW5lIHVuaXQt
dGVzdCBDQTBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABH+0QU0AGSmxfEOs1Lyz
czE08FmYROVSv1JXLimyDDnVCNpWljPwtYG88amNak1StyKdAx4SUwVho6Nkj+ek
Qy+jYzBhMB0GA1UdDgQWBBSyg+0KkJBpUeAfqZpYlRa78VI3uDAfBgNVHSMEGDAW
gBSyg+0KkJBpUeAfqZpYlRa78VI3uDAPBgNVHRMBAf8EBTADAQH/MA4GA1UdDwEB
/wQEAwICBDAKBggqhkjOPQQDAgNIADBFAiEAg+rEqHqB8vDMwqULezlj+Yanscs2
HjDp0iBiFjZcNPQCIFIa1cbvC3Yh5Xc2Be+WTkTnq8ndDmKu7i/1peIjrlNl
-----END CERTIFICATE-----
`;

const DAY = 86_400_000;

describe('parseCertificate', () => {
  it('reads validity, serial, issuer and the DNS names (not the IP) in lower case', () => {
    const facts = parseCertificate(LEAF);
    expect(facts.notBefore.toISOString()).toBe('2026-11-26T00:43:54.000Z');
    expect(facts.notAfter.toISOString()).toBe('2126-11-02T00:43:54.000Z');
    expect(facts.domains).toEqual(['localhost', '*.example.test', 'example.test']);
    expect(facts.serialNumber).toBe('5173');
    expect(facts.issuer).toContain('Siteplane unit-test CA');
  });

  it('reads the first certificate of a bundle (the leaf of a full chain)', () => {
    expect(parseCertificate(`${LEAF}${CA}`).domains).toEqual(['localhost', '*.example.test', 'example.test']);
    expect(parseCertificate(`${CA}${LEAF}`).domains).toEqual([]);
  });

  it('rejects text that is not a certificate', () => {
    expect(() => parseCertificate('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n')).toThrow();
  });
});

describe('renewal window', () => {
  const notAfter = new Date('2030-03-31T12:00:00Z');

  it('is due 30 days before expiry, to the millisecond', () => {
    expect(RENEW_BEFORE_DAYS).toBe(30);
    expect(renewalDueAt(notAfter).toISOString()).toBe('2030-03-01T12:00:00.000Z');
    expect(isRenewalDue(notAfter, new Date(notAfter.getTime() - 30 * DAY - 1))).toBe(false);
    expect(isRenewalDue(notAfter, new Date(notAfter.getTime() - 30 * DAY))).toBe(true);
    expect(isRenewalDue(notAfter, new Date(notAfter.getTime() + DAY))).toBe(true);
  });

  it('takes another window from the policy', () => {
    expect(isRenewalDue(notAfter, new Date(notAfter.getTime() - 10 * DAY), { renewBeforeDays: 7 })).toBe(false);
    expect(isRenewalDue(notAfter, new Date(notAfter.getTime() - 7 * DAY), { renewBeforeDays: 7 })).toBe(true);
  });
});

describe('renewalDecision', () => {
  const cert = { notAfter: new Date('2030-03-31T12:00:00Z'), domains: ['example.com', 'www.example.com'] };
  const wanted = ['example.com', 'www.example.com'];

  it('is not due early, and says when it will be', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    expect(renewalDecision(cert, { domains: wanted, now })).toEqual({ due: false, dueAt: new Date('2030-03-01T12:00:00Z') });
  });

  it('is due inside the window, then expired after notAfter', () => {
    const inWindow = new Date('2030-03-15T00:00:00Z');
    expect(renewalDecision(cert, { domains: wanted, now: inWindow })).toEqual({ due: true, reason: 'expiring', dueAt: inWindow });
    const late = new Date('2030-04-01T00:00:00Z');
    expect(renewalDecision(cert, { domains: wanted, now: late })).toEqual({ due: true, reason: 'expired', dueAt: late });
  });

  it('is due at once when the site wants a name the certificate lacks', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    expect(renewalDecision(cert, { domains: ['Example.com', '*.example.com'], now })).toEqual({
      due: true,
      reason: 'names_changed',
      dueAt: now,
    });
    // Dropping a name is no reason to renew early: the certificate still covers what is wanted.
    expect(renewalDecision(cert, { domains: ['example.com'], now }).due).toBe(false);
  });
});
