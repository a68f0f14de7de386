import { afterEach, describe, expect, it } from 'vitest';
import type { Recipe } from '../../src/provisioning/step.js';
import { seedServer, startTestService, type TestService, waitForStatus } from '../support/test-service.js';

/**
 * Two sites of one server provisioned side by side each record what they installed in the
 * server's facts (seen on a pristine host: a PHP site installed MariaDB while an Adonis site
 * installed PostgreSQL, and the job that finished last wrote back its own stale copy of the facts,
 * so MariaDB vanished from them and the next Laravel site was planned on PostgreSQL).
 */
describe('facts a step records are merged into the server’s current facts', () => {
  let s: TestService;
  afterEach(async () => s?.stop());

  it('two concurrent jobs each add a database engine: both are in the facts afterwards', async () => {
    let release!: () => void;
    const bothStarted = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = 0;
    const recipe = (type: string): Recipe => ({
      type: type as Recipe['type'],
      create: (site) => [
        {
          name: 'ensure database engine',
          async run(ctx) {
            // Both jobs hold their copy of the facts (loaded at their start) before either writes.
            if (++started === 2) release();
            await bothStarted;
            const patch = site.type === 'adonis' ? { postgresql: 'postgresql15' as const } : { mysql: 'mariadb1011' as const };
            if (site.type === 'adonis') await new Promise((r) => setTimeout(r, 50));
            await ctx.updateFacts(patch);
          },
        },
      ],
      remove: () => [],
    });
    s = await startTestService({ recipes: recipe, env: { WORKER_CONCURRENCY: '4' } });
    const { server, serverUser } = await seedServer(s, { os: 'debian 12', php: ['8.2'], node: '22.11.0' });
    const create = async (type: string, domain: string, options: Record<string, unknown>) => {
      const res = await s.app.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: { authorization: `Bearer ${s.token}` },
        payload: { server, serverUser, type, domain, ssl: false, options },
      });
      expect(res.statusCode, res.body).toBe(202);
      return res.json().uuid as string;
    };
    const php = await create('php', 'php.example.com', { shouldCreateDatabaseAndUser: true });
    const adonis = await create('adonis', 'adonis.example.com', { site_type_version: 6, shouldCreateDatabaseAndUser: true });
    await waitForStatus(s, php, ['installed']);
    await waitForStatus(s, adonis, ['installed']);

    const res = await s.app.inject({
      method: 'GET',
      url: `/api/v1/servers/${server}`,
      headers: { authorization: `Bearer ${s.token}` },
    });
    expect(res.json().facts).toMatchObject({ mysql: 'mariadb1011', postgresql: 'postgresql15', php: ['8.2'] });
  });
});
