// Which certificate each kind of site gets (issue 4 items 2, 3, 5): pure rules.
import { describe, expect, it } from 'vitest';
import { OPERATOR_OWNER, planCertificate, type SiteForCertificate } from '../../src/tls/certificate-plan.js';

type SiteOverrides = Partial<Omit<SiteForCertificate, 'ssl'>> & { ssl?: Partial<SiteForCertificate['ssl']> };
const site = (over: SiteOverrides = {}): SiteForCertificate => ({
  uuid: '11111111-1111-4111-8111-111111111111',
  teamUuid: 'team-1',
  domain: 'shop.example.com',
  freeDomain: false,
  ...over,
  ssl: { provider: 'letsencrypt', email: 'ops@example.com', wildcard: false, includeWww: false, dnsProfile: null, ...over.ssl },
});
const zone = { zone: 'apps.example.net', dnsProfile: '22222222-2222-4222-8222-222222222222' };

describe('planCertificate', () => {
  it('spec §2.1 sslProvider: a custom domain: its own name, HTTP-01, the team account at the chosen CA', () => {
    expect(planCertificate(site({ ssl: { provider: 'zerossl' } }), zone)).toEqual({
      scope: 'site:11111111-1111-4111-8111-111111111111',
      owner: 'team-1',
      ca: 'zerossl',
      names: ['shop.example.com'],
      challenge: 'http-01',
      dnsProfile: null,
      email: 'ops@example.com',
      freeZone: null,
    });
  });

  it('spec §2.3/§4.1 rule 4: a wildcard is *.domain + domain (+ www with includeWwwSslCert), DNS-01 via its profile', () => {
    const dnsProfile = { uuid: '33333333-3333-4333-8333-333333333333', provider: 'cloudflare' };
    const plain = planCertificate(site({ ssl: { wildcard: true, dnsProfile } }), null);
    expect(plain).toMatchObject({
      names: ['*.shop.example.com', 'shop.example.com'],
      challenge: 'dns-01',
      dnsProfile: dnsProfile.uuid,
    });
    const www = planCertificate(site({ ssl: { wildcard: true, includeWww: true, dnsProfile } }), null);
    expect(www.names).toEqual(['*.shop.example.com', 'shop.example.com', 'www.shop.example.com']);
  });

  it('spec §4.1 rule 3, issue 10 item 11: a temporary domain in the owned zone gets its own name only, DNS-01, the operator account', () => {
    const plan = planCertificate(site({ freeDomain: true, domain: 'abcdefghijklmnop1234.apps.example.net' }), zone);
    expect(plan).toEqual({
      scope: 'site:11111111-1111-4111-8111-111111111111',
      owner: OPERATOR_OWNER,
      ca: 'letsencrypt',
      names: ['abcdefghijklmnop1234.apps.example.net'],
      challenge: 'dns-01',
      dnsProfile: zone.dnsProfile,
      email: null,
      freeZone: { zone: 'apps.example.net', team: 'team-1', site: '11111111-1111-4111-8111-111111111111' },
    });
    // Two temporary sites: two certificate subjects, neither a wildcard of the zone.
    const other = planCertificate(site({ uuid: 'x', freeDomain: true, domain: 'qrstuvwxyzabcdef0000.apps.example.net' }), zone);
    expect(other.scope).not.toBe(plan.scope);
    expect(other.names).toEqual(['qrstuvwxyzabcdef0000.apps.example.net']);
  });

  it('spec §4.1 rule 3: a temporary domain under sslip.io (or made before the zone was configured) gets its own HTTP-01 certificate', () => {
    const sslip = site({ freeDomain: true, domain: 'abcdefghijklmnop1234.203-0-113-7.sslip.io' });
    expect(planCertificate(sslip, null)).toMatchObject({ names: [sslip.domain], challenge: 'http-01', freeZone: null });
    expect(planCertificate(sslip, zone)).toMatchObject({ names: [sslip.domain], challenge: 'http-01', freeZone: null });
  });
});
