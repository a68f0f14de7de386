import { SITE_TYPE_IDS } from '@siteplane/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRecipes } from '../../src/app/recipes.js';
import { seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';

const OPTIONS: Record<string, Record<string, unknown>> = {
  laravel: { shouldCreateDatabaseAndUser: true },
  php: {},
  wordpress: {
    wpAdminSetup: { title: 'Blog', adminUser: 'admin', adminPassword: 'hunter2hunter2', adminEmail: 'a@example.com' },
  },
  phpmyadmin: {},
  adonis: { site_type_version: 6, shouldCreateDatabaseAndUser: true },
  'nuxt-ssr': { site_type_version: 3 },
  'nuxt-static': { site_type_version: 3 },
  'next-ssr': {},
  'nodejs-ssr': {},
  'nodejs-static': { artifactPath: 'dist' },
  strapi: { site_type_version: 5, shouldCreateDatabaseAndUser: true },
  directus: { site_type_version: 11, shouldCreateDatabaseAndUser: true },
  'generic-port': { port: 9100 },
  soketi: {},
  'static-html': { webDirectory: 'public' },
};

describe(`every site type through the real recipes on a dry-run server (${TEST_DB}; spec §2.5, ARCHITECTURE §2 dry-run)`, () => {
  let s: TestService;
  let ids: { server: string; serverUser: string };
  beforeAll(async () => {
    s = await startTestService({ recipes: defaultRecipes });
    ids = await seedServer(s, { php: [], node: null });
  });
  afterAll(async () => s?.stop());

  for (const type of SITE_TYPE_IDS) {
    it(`${type}: created (every command logged, nothing run) and deleted with its database`, async () => {
      const auth = { authorization: `Bearer ${s.token}` };
      const res = await s.app.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: auth,
        payload: { ...ids, type, domain: `${type}.example.com`, ssl: false, options: OPTIONS[type] },
      });
      expect(res.statusCode, res.body).toBe(202);
      const site = res.json();
      const done = await waitForStatus(s, site.uuid, ['installed', 'failed'], 20_000);
      const op = (await s.app.inject({ method: 'GET', url: `/api/v1/operations/${site.operation.uuid}`, headers: auth })).json();
      expect(done.status, JSON.stringify(op.error)).toBe('installed');
      expect(op.steps.length).toBeGreaterThan(2);
      expect(op.steps.every((x: { status: string }) => x.status === 'succeeded')).toBe(true);
      expect(op.logs.some((l: { line: string }) => l.line.startsWith('would run: '))).toBe(true);
      const del = await s.app.inject({
        method: 'DELETE',
        url: `/api/v1/sites/${site.uuid}`,
        headers: { ...auth, 'content-type': 'application/json' },
        payload: { deleteDatabase: true },
      });
      expect(del.statusCode).toBe(202);
      const gone = await waitForStatus(s, site.uuid, ['gone', 'delete_failed'], 20_000);
      expect(gone.status, JSON.stringify(gone.failure)).toBe('gone');
    });
  }
});
