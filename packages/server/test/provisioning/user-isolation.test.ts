import { describe, expect, it } from 'vitest';
import type { Executor } from '../../src/provisioning/executor.js';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { ensurePhpFpmPool, POOL_DIRECTORIES } from '../../src/provisioning/steps/ensure-php-fpm-pool.js';
import { ensurePm2Process } from '../../src/provisioning/steps/ensure-pm2-process.js';
import { installDirectus } from '../../src/provisioning/steps/frameworks/install-directus.js';
import { SOKETI_PROCESS } from '../../src/provisioning/steps/frameworks/install-soketi.js';
import { RELOAD_PHP_FPM } from '../../src/provisioning/steps/services.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeLedger } from './support/fake-ledger.js';
import { FakeServer } from './support/fake-server.js';
import { isChange } from './support/footprint.js';
import { siteOf } from './support/sites.js';

/**
 * Issue 10 item 9, what the steps leave on a server (the fake one; the system test
 * test/system/sites/user-isolation.test.ts tries it on a real one): homes 0710 and site roots
 * 0750 in nginx's group, a PHP pool confined to its user's home with its own temp and session
 * directories, and generated secrets (Soketi's keys in the ecosystem file, Directus's SQLite
 * database) in 0600 files. Soketi cannot be installed on the test host (its uWebSockets.js comes
 * from github.com), so its ecosystem file is checked here. Sites made before get the modes on
 * their next run.
 */
const HOME = '/home/alice';

async function created(type: 'php' | 'soketi' | 'directus', overrides = {}) {
  const server = new FakeServer();
  const site = siteOf(type, overrides);
  // The site's ledger, kept for its later runs (they find their own resources in it).
  const ledger = new FakeLedger();
  await runSteps(makeContext(server.exec, site, { ledger }), recipeFor(type).create(site));
  expect(server.unknown).toEqual([]);
  const again = () => makeContext(server.exec, site, { ledger });
  return { server, site, again, root: `${HOME}/${site.domain}` };
}

describe('homes and site roots', () => {
  it('a new site: home 0710 and site root 0750, both in www-data, owned by the user', async () => {
    const { server, root } = await created('php');
    expect(server.fs.get(HOME)).toMatchObject({ type: 'dir', owner: 'alice', group: 'www-data', mode: '710' });
    expect(server.fs.get(root)).toMatchObject({ type: 'dir', owner: 'alice', group: 'www-data', mode: '750' });
    // Inside, nginx (through the group of the root) reads what it serves.
    expect(server.fs.get(`${root}/releases/initial/web/index.html`)).toMatchObject({ owner: 'alice', mode: '644' });
  });

  it('a site made before (home 0755, root 0755, user group) gets them on its next run; root regroups, never chmods the root', async () => {
    const { server, site, again, root } = await created('php');
    Object.assign(server.fs.get(HOME)!, { mode: '755', group: 'alice' });
    Object.assign(server.fs.get(root)!, { mode: '755', group: 'alice' });
    const ran = server.executed.length;
    const ctx = again();
    await runSteps(ctx, recipeFor('php').create(site));
    expect(server.fs.get(HOME)).toMatchObject({ owner: 'alice', group: 'www-data', mode: '710' });
    expect(server.fs.get(root)).toMatchObject({ owner: 'alice', group: 'www-data', mode: '750' });
    const changes = server.executed.slice(ran).filter(isChange);
    const onRoot = changes.filter((c) => c.argv.includes(root));
    expect(onRoot.map((c) => [c.options.asUser ?? 'root', ...c.argv])).toEqual([
      ['root', 'chgrp', '-h', '--', 'www-data', root],
      ['alice', 'chmod', '0750', '--', root],
    ]);
    expect(ctx.logs).toContain(`made ${HOME} mode 0710, group www-data: nginx passes through, other users do not`);
    expect(ctx.logs).toContain(`made ${root} mode 0750, group www-data: nginx reads it, other users do not`);
    // Then nothing is left to change.
    const later = server.executed.length;
    await runSteps(again(), recipeFor('php').create(site));
    expect(server.executed.slice(later).filter(isChange)).toEqual([]);
  });
});

describe("the user's PHP-FPM pool", () => {
  it("is confined to the user's home and its own temp and session directories, which the user makes 0700", async () => {
    const { server } = await created('php');
    const pool = server.fs.read('/etc/php/8.2/fpm/pool.d/alice.conf') ?? '';
    expect(pool).toContain('php_admin_value[open_basedir] = /home/alice/:/usr/share/php/\n');
    expect(pool).toContain(`php_admin_value[sys_temp_dir] = ${HOME}/.siteplane/tmp\n`);
    expect(pool).toContain(`php_admin_value[upload_tmp_dir] = ${HOME}/.siteplane/tmp\n`);
    expect(pool).toContain(`php_admin_value[session.save_path] = ${HOME}/.siteplane/sessions\n`);
    expect(pool).toContain(`env[TMPDIR] = ${HOME}/.siteplane/tmp\n`);
    for (const dir of ['.siteplane', '.siteplane/tmp', '.siteplane/sessions']) {
      expect(server.fs.get(`${HOME}/${dir}`), dir).toMatchObject({ type: 'dir', owner: 'alice', mode: '700' });
    }
    const made = server.calls.filter((c) => c.argv[2] === POOL_DIRECTORIES);
    expect(made).toHaveLength(1);
    expect(made[0]?.options.asUser).toBe('alice');
  });

  it('a pool made before gets the directories, and narrows one left open', async () => {
    const { server, again } = await created('php');
    server.fs.remove(`${HOME}/.siteplane`, true);
    await runSteps(again(), [ensurePhpFpmPool('8.2')]);
    expect(server.fs.get(`${HOME}/.siteplane/sessions`)).toMatchObject({ owner: 'alice', mode: '700' });
    Object.assign(server.fs.get(`${HOME}/.siteplane/tmp`)!, { mode: '777' });
    await runSteps(again(), [ensurePhpFpmPool('8.2')]);
    expect(server.fs.get(`${HOME}/.siteplane/tmp`)).toMatchObject({ owner: 'alice', mode: '700' });
  });

  it("reloads (or starts) php-fpm under the server's php-fpm lock: two users' first pools never start two masters", async () => {
    const server = new FakeServer();
    const site = siteOf('php');
    await runSteps(makeContext(server.exec, site), recipeFor('php').create(site));
    const held: string[] = [];
    const underLock: string[][] = [];
    const exec: Executor = {
      ...server.exec,
      run: async (argv, options) => {
        if (argv[2] === RELOAD_PHP_FPM) underLock.push([...held]);
        return server.exec.run(argv, options);
      },
    };
    const ctx = makeContext(exec, siteOf('php', { user: 'bob', domain: 'bob.example.com' }));
    const inner = ctx.withServerLock.bind(ctx);
    ctx.withServerLock = (name, fn) =>
      inner(name, async () => {
        held.push(name);
        try {
          return await fn();
        } finally {
          held.splice(held.indexOf(name), 1);
        }
      });
    await runSteps(ctx, recipeFor('php').create(ctx.site));
    expect(underLock).toEqual([['php-fpm-pool:8.2:bob', 'php-fpm:8.2']]);
  });
});

describe('generated secrets are in files only their user reads', () => {
  it("Soketi: the ecosystem file that carries its app key and secret is 0600; the keys' file is read as the user", async () => {
    const { server, root } = await created('soketi');
    const ecosystem = server.fs.get(`${root}/ecosystem.config.cjs`);
    expect(ecosystem).toMatchObject({ type: 'file', owner: 'alice', mode: '600' });
    expect(server.fs.read(`${root}/ecosystem.config.cjs`)).toContain('SOKETI_DEFAULT_APP_SECRET');
    expect(server.fs.get(`${root}/releases/soketi/soketi.env.json`)).toMatchObject({ owner: 'alice', mode: '600' });
    // PM2's home, where `pm2 save` dumps the environment, is the user's alone.
    expect(server.fs.get(`${HOME}/.pm2`)).toMatchObject({ type: 'dir', owner: 'alice', mode: '700' });
    const reads = server.executed.filter((c) => c.argv[0] === 'cat' && String(c.argv.at(-1)).endsWith('soketi.env.json'));
    expect(reads.length).toBeGreaterThan(0);
    for (const read of reads) expect(read.options.asUser).toBe('alice');
  });

  it('Soketi: an ecosystem file written 0644 before is narrowed by its user on the next run, its content kept', async () => {
    const { server, again, root } = await created('soketi');
    const path = `${root}/ecosystem.config.cjs`;
    const content = server.fs.read(path);
    Object.assign(server.fs.get(path)!, { mode: '644' });
    const ctx = again();
    await runSteps(ctx, [ensurePm2Process(SOKETI_PROCESS)]);
    expect(server.fs.get(path)).toMatchObject({ owner: 'alice', mode: '600' });
    expect(server.fs.read(path)).toBe(content);
    const chmod = server.executed.filter((c) => c.argv[0] === 'chmod' && c.argv.includes(path));
    expect(chmod.map((c) => [c.options.asUser, ...c.argv])).toEqual([['alice', 'chmod', 'go=', '--', path]]);
    expect(ctx.logs).toContain(`restricted ${path} to alice`);
    // Then it is left alone.
    const later = server.executed.length;
    await runSteps(again(), [ensurePm2Process(SOKETI_PROCESS)]);
    expect(server.executed.slice(later).filter(isChange)).toEqual([]);
  });

  it('Directus on SQLite: the database its bootstrap made 0644 is narrowed to 0600 by its user, beside its 0600 config', async () => {
    const { server, again, root } = await created('directus', { database: null });
    const db = `${root}/shared/directus.db`;
    expect(server.fs.get(db)).toMatchObject({ type: 'file', owner: 'alice', mode: '600' });
    expect(server.fs.get(`${root}/releases/directus/directus.config.json`)).toMatchObject({ owner: 'alice', mode: '600' });
    const chmod = server.executed.filter((c) => c.argv[0] === 'chmod' && c.argv.includes(db));
    expect(chmod.map((c) => c.options.asUser)).toEqual(['alice']);
    // A site installed before: the next run narrows it too.
    Object.assign(server.fs.get(db)!, { mode: '644' });
    await runSteps(again(), [installDirectus(11)]);
    expect(server.fs.get(db)).toMatchObject({ mode: '600' });
  });
});
