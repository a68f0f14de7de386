import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllowedTargets } from '../../src/egress/address-policy.js';
import { EgressPolicy } from '../../src/egress/egress-policy.js';
import { obtainCertificate } from '../../src/use-cases/ssl/obtain-certificate.js';
import { startTestService, TEST_DB, type TestService } from '../support/test-service.js';

/**
 * The hook the health check and siteplane_acme_orders_total hang on: each order's outcome, by error kind.
 * (A refused CA connection is classified ca_unreachable by tls/classify-error.ts, tested there.)
 */
describe(`ACME order outcomes are reported, on ${TEST_DB}`, () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService();
  });
  afterAll(async () => s?.stop());

  it('a failed order reports its error kind (the kind the health check counts ca_unreachable by)', async () => {
    const outcomes: string[] = [];
    const deps = {
      db: s.storage.db,
      dialect: s.storage.dialect,
      secrets: s.useCases.secrets,
      clock: s.useCases.clock,
      settings: {
        directories: { letsencrypt: 'http://127.0.0.1:1/directory', zerossl: 'http://127.0.0.1:1/directory' },
        zerosslEab: null,
        caCertsPem: null,
        resolvers: [],
        freeZone: null,
        freeZoneBudget: { perWeek: 0, perTeamPerWeek: 0 },
      },
      dnsProvider: () => {
        throw new Error('no DNS here');
      },
      egress: new EgressPolicy(parseAllowedTargets('none').ranges),
      orderOutcome: (outcome: string) => outcomes.push(outcome),
    };
    await expect(
      obtainCertificate(deps, {
        plan: {
          scope: 'site:00000000-0000-4000-8000-000000000001',
          owner: 'team-1',
          ca: 'letsencrypt',
          names: ['shop.example.com'],
          challenge: 'dns-01',
          dnsProfile: null,
          email: null,
          freeZone: null,
        },
        serverAddresses: ['127.0.0.1'],
        log: () => {},
        reason: 'issue',
        holder: 'op-1',
      }),
    ).rejects.toThrow(/needs DNS-01/);
    expect(outcomes).toEqual(['dns_provider_failed']);
  });
});
