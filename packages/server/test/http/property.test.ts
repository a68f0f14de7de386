import { SITE_TYPE_IDS } from '@siteplane/contract';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedServer, startTestService, TEST_DB, type TestService } from '../support/test-service.js';

describe(`random create bodies on ${TEST_DB} (robustness)`, () => {
  let s: TestService;
  let ids: { server: string; serverUser: string };
  beforeAll(async () => {
    s = await startTestService();
    ids = await seedServer(s);
  });
  afterAll(async () => s?.stop());

  const hostile = fc.constantFrom(';', '$(id)', '`id`', "'", '"', '\n', '\u0000', 'е', '../..', '', ' ', 'pg_x', '-1', '1e9');
  const value = fc.oneof(
    fc.string(),
    hostile,
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.double(),
    fc.array(fc.string(), { maxLength: 2 }),
    fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }),
  );
  const optionKeys = fc.constantFrom(
    'phpVersion',
    'nodejsVersion',
    'database',
    'databaseUser',
    'databasePassword',
    'shouldCreateDatabaseAndUser',
    'preferredDbServer',
    'site_type_version',
    'port',
    'artifactPath',
    'webDirectory',
    'wpAdminSetup',
    'performInstallSetup',
    'buildCommand',
    '__proto__',
    'constructor',
  );
  const body = fc.record(
    {
      server: fc.oneof(fc.constant(undefined), fc.uuid(), value),
      serverUser: fc.oneof(fc.constant(undefined), value),
      type: fc.oneof(fc.constantFrom(...SITE_TYPE_IDS, 'Static HTML', 'WordPress'), value),
      domain: fc.oneof(fc.domain(), value),
      freeDomain: fc.oneof(fc.boolean(), value),
      ssl: fc.oneof(fc.boolean(), value),
      sslEmail: fc.oneof(fc.emailAddress(), value),
      sslProvider: fc.oneof(fc.constantFrom('letsencrypt', 'zerossl'), value),
      wildcard: fc.oneof(fc.boolean(), value),
      dnsProfile: fc.oneof(fc.record({ uuid: fc.uuid(), provider: fc.constantFrom('cloudflare', 'aws') }), value),
      options: fc.oneof(fc.dictionary(optionKeys, value, { maxKeys: 5 }), value),
    },
    { requiredKeys: [] },
  );

  it('never a 5xx; every 422 names at least one field; every 202 is a site', async () => {
    // undefined server/serverUser stand for the seeded ones, known only after beforeAll.
    await fc.assert(
      fc.asyncProperty(body, async (raw) => {
        const payload = {
          ...raw,
          server: raw.server === undefined ? ids.server : raw.server,
          serverUser: raw.serverUser === undefined ? ids.serverUser : raw.serverUser,
        };
        const res = await s.app.inject({
          method: 'POST',
          url: '/api/v1/sites',
          headers: { authorization: `Bearer ${s.token}` },
          payload,
        });
        expect(res.statusCode).toBeLessThan(500);
        if (res.statusCode === 422) {
          const problem = res.json();
          expect(problem.errors.length).toBeGreaterThan(0);
          for (const e of problem.errors) expect(typeof e.field).toBe('string');
        } else {
          expect(res.statusCode).toBe(202);
          expect(res.json().uuid).toBeDefined();
        }
      }),
      { numRuns: 300 },
    );
  });
});
