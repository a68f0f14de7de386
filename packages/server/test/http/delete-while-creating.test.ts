import type { SiteTypeId } from '@siteplane/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Recipe } from '../../src/provisioning/step.js';
import { fakeRecipes, seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';

/**
 * A delete accepted while the site's create is still queued or running answers `deleting`, and the
 * site stays `deleting` from then on: the create's start and its outcome (installed or failed) must
 * not turn it back until the delete has run.
 */
describe(`a delete accepted while the create runs: 202, and the site stays deleting (${TEST_DB}; spec §4.1 DELETE)`, () => {
  let s: TestService;
  let ids: { server: string; serverUser: string };
  let releaseCreate: () => void = () => {};
  let releaseDelete: () => void = () => {};
  let createStarted: Promise<void>;
  let deleteStarted: Promise<void>;
  let failCreate = false;

  beforeAll(async () => {
    const base = fakeRecipes();
    const gated = (type: SiteTypeId): Recipe => {
      const recipe = base(type);
      return {
        ...recipe,
        create: (site) => [
          {
            name: 'wait for the test',
            async run() {
              await new Promise<void>((resolve) => {
                releaseCreate = resolve;
                markCreate();
              });
              if (failCreate) throw new Error('create failed on purpose');
            },
          },
          ...recipe.create(site),
        ],
        remove: (site, options) => [
          {
            name: 'wait for the test',
            async run() {
              await new Promise<void>((resolve) => {
                releaseDelete = resolve;
                markDelete();
              });
            },
          },
          ...recipe.remove(site, options),
        ],
      };
    };
    let markCreate: () => void = () => {};
    let markDelete: () => void = () => {};
    const arm = () => {
      createStarted = new Promise((r) => {
        markCreate = r;
      });
      deleteStarted = new Promise((r) => {
        markDelete = r;
      });
    };
    arm();
    rearm = arm;
    s = await startTestService({ recipes: gated });
    ids = await seedServer(s);
  });
  let rearm: () => void = () => {};
  afterAll(async () => s?.stop());

  const call = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: object) =>
    s.app.inject({ method, url, headers: { authorization: `Bearer ${s.token}` }, ...(payload ? { payload } : {}) });
  const status = async (uuid: string) => (await call('GET', `/api/v1/sites/${uuid}`)).json().status;

  for (const outcome of ['succeeds', 'fails'] as const) {
    it(`stays deleting while the create ${outcome} and until the delete has run`, async () => {
      rearm();
      failCreate = outcome === 'fails';
      const created = await call('POST', '/api/v1/sites', {
        ...ids,
        type: 'php',
        domain: `gone-${outcome}.example.com`,
        ssl: false,
        options: {},
      });
      expect(created.statusCode, created.body).toBe(202);
      const site = created.json().uuid;
      await createStarted;
      const deleted = await call('DELETE', `/api/v1/sites/${site}`);
      expect(deleted.statusCode, deleted.body).toBe(202);
      expect(deleted.json().status).toBe('deleting');

      releaseCreate();
      await deleteStarted; // the create has finished: its outcome is recorded
      const createOp = (await call('GET', `/api/v1/operations/${created.json().operation.uuid}`)).json();
      expect(createOp.status).toBe(outcome === 'succeeds' ? 'succeeded' : 'failed');
      expect(await status(site)).toBe('deleting');

      releaseDelete();
      const gone = await waitForStatus(s, site, ['gone', 'deleted', 'delete_failed'], 20_000);
      expect(['gone', 'deleted']).toContain(gone.status);
    });
  }
});
