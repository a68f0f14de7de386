import { SITE_TYPE_IDS, type SiteTypeId } from '@siteplane/contract';
import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeLedger } from './support/fake-ledger.js';
import { FakeServer } from './support/fake-server.js';
import { describeCall, isChange, siteFootprint } from './support/footprint.js';
import { siteOf } from './support/sites.js';

const BASE = ['ensure system user', 'ensure nginx'];
const DB = ['ensure database engine', 'ensure database and user'];
const NODE_PROCESS = ['ensure Node.js', 'ensure PM2'];

/** ARCHITECTURE §3: the steps of each type's recipe, in order. */
const EXPECTED_STEPS: Record<SiteTypeId, string[]> = {
  laravel: [...BASE, 'ensure PHP 8.3', ...DB, 'ensure site directory', 'ensure PHP-FPM pool', 'ensure nginx vhost'],
  php: [...BASE, 'ensure PHP 8.2', 'ensure site directory', 'ensure PHP-FPM pool', 'ensure nginx vhost'],
  wordpress: [
    ...BASE,
    'ensure PHP 8.2',
    ...DB,
    'ensure site directory',
    'ensure WordPress files',
    'ensure wp-config.php',
    'run the WordPress installer',
    'ensure PHP-FPM pool',
    'ensure nginx vhost',
  ],
  phpmyadmin: [
    ...BASE,
    'ensure PHP 8.2',
    ...DB,
    'ensure site directory',
    'ensure phpMyAdmin files',
    'ensure phpMyAdmin config.inc.php',
    'ensure PHP-FPM pool',
    'ensure nginx vhost',
  ],
  adonis: [...BASE, ...NODE_PROCESS, ...DB, 'ensure site directory', 'ensure PM2 process', 'ensure nginx vhost'],
  'nuxt-ssr': [...BASE, ...NODE_PROCESS, 'ensure site directory', 'ensure PM2 process', 'ensure nginx vhost'],
  'nuxt-static': [...BASE, 'ensure Node.js', 'ensure site directory', 'ensure nginx vhost'],
  'next-ssr': [...BASE, ...NODE_PROCESS, 'ensure site directory', 'ensure PM2 process', 'ensure nginx vhost'],
  'nodejs-ssr': [...BASE, ...NODE_PROCESS, 'ensure site directory', 'ensure PM2 process', 'ensure nginx vhost'],
  'nodejs-static': [...BASE, 'ensure Node.js', 'ensure site directory', 'ensure nginx vhost'],
  strapi: [
    ...BASE,
    ...NODE_PROCESS,
    ...DB,
    'ensure site directory',
    'ensure build tools',
    'install Strapi 5 from npm',
    'ensure PM2 process',
    'ensure nginx vhost',
  ],
  directus: [
    ...BASE,
    ...NODE_PROCESS,
    ...DB,
    'ensure site directory',
    'ensure build tools',
    'install Directus 11 from npm',
    'ensure PM2 process',
    'ensure nginx vhost',
  ],
  'generic-port': [...BASE, 'ensure site directory', 'ensure nginx vhost'],
  soketi: [
    ...BASE,
    ...NODE_PROCESS,
    'ensure site directory',
    'install Soketi from npm',
    'ensure PM2 process',
    'ensure nginx vhost',
  ],
  'static-html': [...BASE, 'ensure site directory', 'ensure nginx vhost'],
};

async function created(type: SiteTypeId) {
  const server = new FakeServer();
  const site = siteOf(type);
  const ledger = new FakeLedger();
  const before = siteFootprint(server, site);
  const ctx = makeContext(server.exec, site, { ledger });
  await runSteps(ctx, recipeFor(type).create(site));
  expect(server.unknown).toEqual([]);
  return { server, site, ledger, ctx, before };
}

describe.each(SITE_TYPE_IDS)('recipe %s', (type) => {
  it('runs its steps in order on a bare Debian 12 server and records what it created', async () => {
    const { server, site, ledger, ctx } = await created(type);
    expect(ctx.stepsRun).toEqual(EXPECTED_STEPS[type]);
    expect(recipeFor(type).type).toBe(type);
    // Every ledger entry names something that now exists on the server.
    const footprint = siteFootprint(server, site);
    for (const entry of ledger.entries) {
      if (entry.kind === 'directory' || entry.kind === 'nginx_vhost' || entry.kind === 'php_fpm_pool')
        expect(server.fs.get(entry.ref)).toBeDefined();
      if (entry.kind === 'pm2_process') expect(footprint.pm2).toContain(entry.ref);
      if (entry.kind === 'pm2_daemon') expect(footprint.pm2Daemon).toBe(true);
      if (entry.kind === 'database') expect(footprint.databases).toContain(entry.ref);
      if (entry.kind === 'database_user') expect(footprint.databaseUsers).toContain(entry.ref);
      if (entry.kind === 'system_user') expect(server.users.has(entry.ref)).toBe(true);
    }
    // …and everything of the site on the server is covered by an entry.
    const ledgered = ledger.entries.map((e) => e.ref);
    for (const path of footprint.paths) {
      const covered = ledgered.some(
        (ref) =>
          path === ref ||
          path.startsWith(`${ref}/`) ||
          path.startsWith(ref.replace('sites-available', 'sites-enabled')) ||
          path.startsWith(`/var/log/nginx/${site.domain}.`),
      );
      expect(covered, `${path} is not in the ledger`).toBe(true);
    }
    expect(footprint.pm2).toEqual(ledger.entries.filter((e) => e.kind === 'pm2_process').map((e) => e.ref));
    expect(footprint.databases).toEqual(ledger.entries.filter((e) => e.kind === 'database').map((e) => e.ref));
    expect(footprint.databaseUsers).toEqual(ledger.entries.filter((e) => e.kind === 'database_user').map((e) => e.ref));
  });

  it('changes nothing when create runs a second time (it only checks)', async () => {
    const { server, site, ledger } = await created(type);
    const state = server.state();
    const entries = structuredClone(ledger.entries);
    const ran = server.executed.length;
    const again = makeContext(server.exec, site, { ledger });
    await runSteps(again, recipeFor(type).create(site));
    // Commands inside the steps' scripts count too.
    const changes = server.executed.slice(ran).filter(isChange).map(describeCall);
    expect(changes).toEqual([]);
    expect(server.state()).toEqual(state);
    expect(ledger.entries).toEqual(entries);
    expect(server.unknown).toEqual([]);
  });

  it('removes exactly what the ledger lists, database included with deleteDatabase', async () => {
    const { server, site, ledger, before } = await created(type);
    const pathsBefore = new Set(server.fs.nodes.keys());
    const footprintPaths = new Set(siteFootprint(server, site).paths);
    const ctx = makeContext(server.exec, site, { ledger });
    await runSteps(ctx, recipeFor(type).remove(site, { deleteDatabase: true }));
    expect(server.unknown).toEqual([]);
    expect(siteFootprint(server, site)).toEqual(before);
    // Nothing outside the site was removed (server-wide packages, configs, the user's home stay).
    // Pid files are a daemon's, not the site's: the PM2 daemon's goes when it is stopped.
    const runtime = (p: string) => p.startsWith('/run/') || p.endsWith('/.pm2/pm2.pid');
    const expectedLeft = [...pathsBefore].filter((p) => !footprintPaths.has(p)).sort();
    expect([...server.fs.nodes.keys()].filter((p) => !runtime(p)).sort()).toEqual(expectedLeft.filter((p) => !runtime(p)));
    // The system user belongs to the server user record and stays; everything else is forgotten.
    expect(ledger.entries.map((e) => e.kind)).toEqual(ledger.entries.length ? ['system_user'] : []);
    // A second deletion finds everything gone and succeeds.
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor(type).remove(site, { deleteDatabase: true }));
  });

  it('keeps the database and its user without deleteDatabase', async () => {
    const { server, site, ledger } = await created(type);
    const kept = siteFootprint(server, site);
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor(type).remove(site, { deleteDatabase: false }));
    const after = siteFootprint(server, site);
    expect(after.databases).toEqual(kept.databases);
    expect(after.databaseUsers).toEqual(kept.databaseUsers);
    expect(after.paths).toEqual([]);
    expect(after.pm2).toEqual([]);
    expect(ledger.entries.map((e) => e.kind).sort()).toEqual(
      [...kept.databases.map(() => 'database'), ...kept.databaseUsers.map(() => 'database_user'), 'system_user'].sort(),
    );
  });
});
