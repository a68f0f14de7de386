// The TLS settings of ARCHITECTURE §2 "Configuration" and issue 4: validated at start, all at once.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/app/config.js';
import { tlsSettingsFrom } from '../../src/use-cases/ssl/tls-settings.js';
import { configProblems } from '../support/config-problems.js';

const PROFILE = '5b0c1a3e-8f1d-4c2a-9e7b-1a2b3c4d5e6f';

describe('TLS configuration', () => {
  it('takes the owned zone and its DNS profile together, normalised', () => {
    const settings = tlsSettingsFrom(
      loadConfig({ FREE_DOMAIN_ZONE: 'Apps.Example.NET.', FREE_DOMAIN_DNS_PROFILE: PROFILE.toUpperCase() }),
    );
    expect(settings.freeZone).toEqual({ zone: 'apps.example.net', dnsProfile: PROFILE });
    expect(tlsSettingsFrom(loadConfig({})).freeZone).toBeNull();
  });

  it("the owned zone's certificate budgets: 50 a week, 10 per team by default; 0 is no limit; others refused", () => {
    expect(tlsSettingsFrom(loadConfig({})).freeZoneBudget).toEqual({ perWeek: 50, perTeamPerWeek: 10 });
    const raised = loadConfig({ FREE_DOMAIN_CERTIFICATES_PER_WEEK: '0', FREE_DOMAIN_TEAM_CERTIFICATES_PER_WEEK: '500' });
    expect(tlsSettingsFrom(raised).freeZoneBudget).toEqual({ perWeek: 0, perTeamPerWeek: 500 });
    const bad = configProblems({ FREE_DOMAIN_CERTIFICATES_PER_WEEK: '-1', FREE_DOMAIN_TEAM_CERTIFICATES_PER_WEEK: 'ten' });
    expect(bad).toHaveLength(2);
    expect(bad[0]).toContain('FREE_DOMAIN_CERTIFICATES_PER_WEEK');
    expect(bad[1]).toContain('FREE_DOMAIN_TEAM_CERTIFICATES_PER_WEEK');
  });

  it('lists every half-set or malformed TLS setting at once', () => {
    expect(configProblems({ FREE_DOMAIN_ZONE: 'apps.example.net', ZEROSSL_EAB_KID: 'kid' })).toEqual([
      'FREE_DOMAIN_ZONE and FREE_DOMAIN_DNS_PROFILE go together: set both (owned zone) or neither (FREE_DOMAIN_BASE)',
      'ZEROSSL_EAB_KID and ZEROSSL_EAB_HMAC_KEY go together: set both or neither',
    ]);
    expect(configProblems({ FREE_DOMAIN_ZONE: 'not a zone', FREE_DOMAIN_DNS_PROFILE: 'profile-1' })).toEqual([
      'FREE_DOMAIN_ZONE must be a domain name',
      'FREE_DOMAIN_DNS_PROFILE must be the UUID of a DNS profile',
    ]);
  });

  it('reads ZeroSSL EAB, the CA directories and ACME_CA_CERTS (a file, or PEM itself)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'siteplane-tls-config-'));
    try {
      const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
      writeFileSync(join(dir, 'ca.pem'), pem);
      const settings = tlsSettingsFrom(
        loadConfig({
          ZEROSSL_EAB_KID: 'kid-1',
          ZEROSSL_EAB_HMAC_KEY: 'hmac-1',
          ACME_DIRECTORY_LETSENCRYPT: 'https://acme-staging-v02.api.letsencrypt.org/directory',
          ACME_CA_CERTS: join(dir, 'ca.pem'),
          DNS_RESOLVERS: '127.0.0.1:8053, 1.1.1.1',
        }),
      );
      expect(settings).toMatchObject({
        zerosslEab: { kid: 'kid-1', hmacKey: 'hmac-1' },
        directories: {
          letsencrypt: 'https://acme-staging-v02.api.letsencrypt.org/directory',
          zerossl: 'https://acme.zerossl.com/v2/DV90',
        },
        caCertsPem: pem,
        resolvers: ['127.0.0.1:8053', '1.1.1.1'],
      });
      expect(tlsSettingsFrom(loadConfig({ ACME_CA_CERTS: pem })).caCertsPem).toBe(pem.trim());
      expect(tlsSettingsFrom(loadConfig({})).zerosslEab).toBeNull();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
