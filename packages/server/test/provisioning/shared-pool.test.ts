import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeLedger } from './support/fake-ledger.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

const POOL = '/etc/php/8.2/fpm/pool.d/alice.conf';

/** ARCHITECTURE §3: one FPM pool per user and PHP version, shared by that user's sites. */
async function twoSites(server: FakeServer) {
  const first = siteOf('php', { domain: 'one.example.com' });
  const second = siteOf('wordpress', { domain: 'two.example.com' });
  const ledgers = [new FakeLedger(), new FakeLedger()];
  await runSteps(makeContext(server.exec, first, { ledger: ledgers[0] }), recipeFor('php').create(first));
  await runSteps(makeContext(server.exec, second, { ledger: ledgers[1] }), recipeFor('wordpress').create(second));
  return { first, second, ledgers: ledgers as [FakeLedger, FakeLedger] };
}

describe('shared PHP-FPM pool', () => {
  it('is created once and recorded by both sites as shared', async () => {
    const server = new FakeServer();
    const { ledgers } = await twoSites(server);
    const pools = [...server.fs.nodes.keys()].filter((p) => p.startsWith('/etc/php/8.2/fpm/pool.d/'));
    expect(pools.sort()).toEqual([POOL, '/etc/php/8.2/fpm/pool.d/www.conf']);
    for (const ledger of ledgers)
      expect(ledger.entries.find((e) => e.kind === 'php_fpm_pool')?.details).toMatchObject({ shared: true, user: 'alice' });
  });

  it('survives the removal of one site while the other still uses it, and goes with the last', async () => {
    const server = new FakeServer();
    const { first, second, ledgers } = await twoSites(server);
    const ctx = makeContext(server.exec, first, { ledger: ledgers[0] });
    await runSteps(ctx, recipeFor('php').remove(first, { deleteDatabase: true }));
    expect(server.fs.get(POOL)).toBeDefined();
    expect(ctx.logs).toContain(`kept PHP-FPM pool ${POOL}: still used by /etc/nginx/sites-enabled/two.example.com.conf`);
    expect(ledgers[0].entries.some((e) => e.kind === 'php_fpm_pool')).toBe(false);
    await runSteps(
      makeContext(server.exec, second, { ledger: ledgers[1] }),
      recipeFor('wordpress').remove(second, { deleteDatabase: true }),
    );
    expect(server.fs.get(POOL)).toBeUndefined();
  });

  it('asks the job runner too: a site still being created keeps the pool', async () => {
    const server = new FakeServer();
    const site = siteOf('php', { domain: 'one.example.com' });
    const ledger = new FakeLedger();
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor('php').create(site));
    const asked: string[] = [];
    const shared = {
      sharedResourceInUse: async (entry: { kind: string; ref: string }) => {
        asked.push(`${entry.kind} ${entry.ref}`);
        return true;
      },
    };
    await runSteps(makeContext(server.exec, site, { ledger, shared }), recipeFor('php').remove(site, { deleteDatabase: false }));
    expect(asked).toEqual([`php_fpm_pool ${POOL}`]);
    expect(server.fs.get(POOL)).toBeDefined();
  });
});
