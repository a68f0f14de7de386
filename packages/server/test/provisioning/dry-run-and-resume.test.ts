import { SITE_TYPE_IDS } from '@siteplane/contract';
import { describe, expect, it } from 'vitest';
import { DryRunExecutor } from '../../src/provisioning/executors/dry-run.js';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeLedger } from './support/fake-ledger.js';
import { FakeServer } from './support/fake-server.js';
import { isChange } from './support/footprint.js';
import { siteOf } from './support/sites.js';

describe('dry-run servers', () => {
  it.each(SITE_TYPE_IDS)('%s: create and remove run to the end, showing what a bare server would get', async (type) => {
    const lines: string[] = [];
    const exec = new DryRunExecutor({ onCommand: (line) => lines.push(line) });
    const site = siteOf(type);
    // Dry-run servers declare their facts at registration.
    const ctx = makeContext(exec, site, { facts: { os: 'debian 12', php: [], node: null, mysql: null, postgresql: null } });
    await runSteps(ctx, recipeFor(type).create(site));
    // The vhost is written (config-file.ts: one script, the path its first argument).
    expect(
      lines.some((line) => line.startsWith('sh -c ') && line.includes(` sh /etc/nginx/sites-available/${site.domain}.conf `)),
    ).toBe(true);
    await runSteps(ctx, recipeFor(type).remove(site, { deleteDatabase: true }));
    expect(lines.some((line) => line.startsWith('rm -f -- /etc/nginx/sites-enabled/'))).toBe(true);
  });
});

describe('a job that stopped half-way', () => {
  it('is finished by the next attempt without redoing what was done', async () => {
    const server = new FakeServer();
    const site = siteOf('laravel');
    const ledger = new FakeLedger();
    // The connection drops while the pool is tested: everything before it is done.
    server.script((argv) => argv[0] === 'php-fpm8.3' && argv[1] === '-t', { code: 255, stderr: 'Connection reset by peer' });
    await expect(runSteps(makeContext(server.exec, site, { ledger }), recipeFor('laravel').create(site))).rejects.toThrow();
    const ran = server.executed.length;
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor('laravel').create(site));
    const redone = server.executed
      .slice(ran)
      .filter(isChange)
      .map((c) => c.argv.join(' '));
    expect(redone.some((c) => c.startsWith('apt-get') || c.startsWith('useradd'))).toBe(false);
    expect(redone).toContain(
      'ln -s -f -n -- /etc/nginx/sites-available/laravel.example.com.conf /etc/nginx/sites-enabled/laravel.example.com.conf',
    );
    expect(server.fs.get('/etc/php/8.3/fpm/pool.d/alice.conf')).toBeDefined();
    expect(server.mysql.statements.filter((s) => s.startsWith('CREATE DATABASE'))).toHaveLength(1);
  });

  it('refuses to adopt a database that exists but is not in the ledger', async () => {
    const server = new FakeServer();
    const site = siteOf('laravel');
    const first = makeContext(server.exec, site);
    await runSteps(first, recipeFor('laravel').create(site));
    // Another site (fresh ledger) naming the same database: deleting it later must not drop ours.
    const other = { ...site, domain: 'other.example.com' };
    await expect(runSteps(makeContext(server.exec, other), recipeFor('laravel').create(other))).rejects.toThrow(
      /database laravel_db already exists on the server and does not belong to this site/,
    );
  });

  it('a deletion that failed half-way lists what is left, and a retry finishes it', async () => {
    const server = new FakeServer();
    const site = siteOf('nodejs-ssr');
    const ledger = new FakeLedger();
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor('nodejs-ssr').create(site));
    server.script((argv) => argv[0] === 'pm2' && argv[1] === 'delete', { code: 1, stderr: 'PM2 daemon not reachable' });
    await expect(
      runSteps(makeContext(server.exec, site, { ledger }), recipeFor('nodejs-ssr').remove(site, { deleteDatabase: false })),
    ).rejects.toThrow(/PM2 daemon not reachable/);
    expect(ledger.entries.map((e) => e.kind)).toEqual(['system_user', 'directory', 'directory', 'pm2_daemon', 'pm2_process']);
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor('nodejs-ssr').remove(site, { deleteDatabase: false }));
    expect(ledger.entries.map((e) => e.kind)).toEqual(['system_user']);
  });
});
