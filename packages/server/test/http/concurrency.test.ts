import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedServer, startTestService, TEST_DB, type TestService } from '../support/test-service.js';

describe(`limits held under concurrency on ${TEST_DB} (spec §8)`, () => {
  let s: TestService;
  let ids: { server: string; serverUser: string };
  beforeAll(async () => {
    s = await startTestService();
    ids = await seedServer(s, { mysql: 'mariadb1011' });
  });
  afterAll(async () => s?.stop());

  it('fifty concurrent phpMyAdmin creates on one server: exactly one 202', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        s.app.inject({
          method: 'POST',
          url: '/api/v1/sites',
          headers: { authorization: `Bearer ${s.token}` },
          payload: { ...ids, type: 'phpmyadmin', domain: `pma${i}.example.com`, ssl: false, options: {} },
        }),
      ),
    );
    const codes = results.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 202)).toHaveLength(1);
    expect(codes.filter((c) => c === 422)).toHaveLength(49);
    for (const r of results.filter((x) => x.statusCode === 422)) {
      expect(r.json().errors.map((e: { field: string }) => e.field)).toEqual(expect.arrayContaining(['type']));
    }
  });

  it('twenty concurrent creates of one database name: exactly one wins', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        s.app.inject({
          method: 'POST',
          url: '/api/v1/sites',
          headers: { authorization: `Bearer ${s.token}` },
          payload: {
            ...ids,
            type: 'php',
            domain: `db${i}.example.com`,
            ssl: false,
            options: { shouldCreateDatabaseAndUser: true, database: 'shared_db' },
          },
        }),
      ),
    );
    expect(results.filter((r) => r.statusCode === 202)).toHaveLength(1);
    expect(results.filter((r) => r.statusCode === 422).every((r) => r.json().errors[0].field === 'options.database')).toBe(true);
  });
});
