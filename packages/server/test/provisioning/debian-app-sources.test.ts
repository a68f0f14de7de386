import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import type { ProvisionedSite, Step } from '../../src/provisioning/step.js';
import { appSourceProblem } from '../../src/provisioning/steps/app-source.js';
import { makeContext, runSteps, type TestContext } from './support/context.js';
import { preinstall } from './support/fake-packages.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

/**
 * WORDPRESS_SOURCE / PHPMYADMIN_SOURCE `debian` (servers that reach Debian's mirror but not
 * wordpress.org or files.phpmyadmin.net): Debian's package, its tree copied for the site.
 */
const BASELINE = [
  'nginx',
  'php8.2-fpm',
  'php8.2-cli',
  'php8.2-mysql',
  'php8.2-pgsql',
  'php8.2-mbstring',
  'php8.2-xml',
  'php8.2-curl',
  'php8.2-zip',
  'mariadb-server',
];

function debianServer(): FakeServer {
  const server = new FakeServer();
  preinstall(server, BASELINE);
  return server;
}

/** Runs the recipe's steps before the files step, then the files step alone; returns its calls. */
async function runFilesStep(server: FakeServer, ctx: TestContext, site: ProvisionedSite, name: string) {
  const steps = recipeFor(site.type).create(site);
  const index = steps.findIndex((step) => step.name === name);
  await runSteps(ctx, steps.slice(0, index));
  const from = server.calls.length;
  await runSteps(ctx, [steps[index] as Step]);
  return server.calls.slice(from);
}

const release = (site: ProvisionedSite) => `/home/${site.user}/${site.domain}/releases/initial`;

function underRelease(server: FakeServer, site: ProvisionedSite) {
  return server.fs.subtree(release(site)).map((path) => [path, server.fs.get(path)!] as const);
}

describe('WordPress from Debian’s package (WORDPRESS_SOURCE=debian)', () => {
  const site = {
    ...siteOf('wordpress'),
    database: { ...siteOf('wordpress').database!, engine: 'mariadb1011' as const, installEngine: false },
  };

  it('installs wordpress, its default theme and php<v> (never Apache) under the packages lock', async () => {
    const server = debianServer();
    const ctx = makeContext(server.exec, site, { settings: { wordpressSource: 'debian' } });
    await runFilesStep(server, ctx, site, 'ensure WordPress files');
    for (const name of ['wordpress', 'wordpress-theme-twentytwentythree', 'php8.2'])
      expect(server.apt.installed.has(name)).toBe(true);
    expect([...server.apt.installed].filter((name) => /apache/.test(name))).toEqual([]);
    const install = server.calls.find((c) => c.argv[0] === 'apt-get' && c.argv.includes('wordpress') && !c.argv.includes('-s'));
    expect(install?.argv).toContain('--no-install-recommends');
  });

  it('gives the site a self-contained copy its user owns: no links, the theme included', async () => {
    const server = debianServer();
    const ctx = makeContext(server.exec, site, { settings: { wordpressSource: 'debian' } });
    await runFilesStep(server, ctx, site, 'ensure WordPress files');
    const nodes = underRelease(server, site);
    expect(nodes.filter(([, node]) => node.type === 'link')).toEqual([]);
    expect(nodes.filter(([, node]) => node.owner !== 'alice')).toEqual([]);
    const root = release(site);
    expect(server.fs.read(`${root}/wp-content/themes/twentytwentythree/style.css`)).toContain('Twenty Twenty-Three');
    expect(server.fs.read(`${root}/wp-includes/ID3/getid3.php`)).toBe('<?php // getID3');
    // Debian's wp-config.php (it loads /etc/wordpress) is not the site's: the next step writes that one.
    expect(server.fs.get(`${root}/wp-config.php`)).toBeUndefined();
  });

  it('runs nothing as root inside the user’s tree (ARCHITECTURE §3: root never follows a user’s link)', async () => {
    const server = debianServer();
    const ctx = makeContext(server.exec, site, { settings: { wordpressSource: 'debian' } });
    const calls = await runFilesStep(server, ctx, site, 'ensure WordPress files');
    const inTree = calls.filter((c) => c.argv.some((arg) => arg.startsWith('/home/alice')));
    expect(inTree.length).toBeGreaterThan(3);
    for (const call of inTree)
      expect({ argv: call.argv, asUser: call.options.asUser, sudo: call.options.sudo }).toEqual({
        argv: call.argv,
        asUser: 'alice',
        sudo: undefined,
      });
  });

  it('a second run only checks (idempotent)', async () => {
    const server = debianServer();
    const ctx = makeContext(server.exec, site, { settings: { wordpressSource: 'debian' } });
    await runFilesStep(server, ctx, site, 'ensure WordPress files');
    const again = await runFilesStep(server, ctx, site, 'ensure WordPress files');
    expect(again.map((c) => c.argv[0])).toEqual(['stat']);
  });

  it('refuses a package plan that would bring Apache, before installing anything', async () => {
    const server = debianServer();
    server.script((argv) => argv[0] === 'apt-get' && argv.includes('-s'), {
      stdout: 'Inst apache2-bin (2.4.62 Debian:12)\nInst wordpress (6.1)\n',
    });
    const ctx = makeContext(server.exec, site, { settings: { wordpressSource: 'debian' } });
    await expect(runFilesStep(server, ctx, site, 'ensure WordPress files')).rejects.toThrow(/would also install apache2-bin/);
    expect(server.apt.installed.has('wordpress')).toBe(false);
  });

  it('names links whose targets are missing instead of copying a broken tree', async () => {
    const server = debianServer();
    preinstall(server, ['wordpress', 'wordpress-theme-twentytwentythree', 'php8.2']);
    server.fs.remove('/usr/share/php/getid3', true);
    const ctx = makeContext(server.exec, site, { settings: { wordpressSource: 'debian' } });
    await expect(runFilesStep(server, ctx, site, 'ensure WordPress files')).rejects.toThrow(/wp-includes\/ID3\/getid3.php/);
    expect(server.fs.get(release(site))?.type).toBe('dir');
    expect(server.fs.get(`${release(site)}/wp-settings.php`)).toBeUndefined();
  });

  it('the whole recipe installs the site from Debian’s package without wordpress.org', async () => {
    const server = debianServer();
    const ctx = makeContext(server.exec, site, { settings: { wordpressSource: 'debian' } });
    await runSteps(ctx, recipeFor('wordpress').create(site));
    expect(server.calls.filter((c) => c.argv[0] === 'curl')).toEqual([]);
    expect(server.fs.read(`${release(site)}/wp-config.php`)).toContain('wordpress_db');
    expect(server.unknown).toEqual([]);
  });
});

describe('phpMyAdmin from Debian’s package (PHPMYADMIN_SOURCE=debian)', () => {
  const site = siteOf('phpmyadmin');

  it('preseeds debconf first: dbconfig creates no database or user, no web server is configured', async () => {
    const server = debianServer();
    const ctx = makeContext(server.exec, site, { settings: { phpmyadminSource: 'debian' } });
    await runFilesStep(server, ctx, site, 'ensure phpMyAdmin files');
    const preseed = server.calls.findIndex((c) => c.argv[0] === 'debconf-set-selections');
    const install = server.calls.findIndex(
      (c) => c.argv[0] === 'apt-get' && c.argv.includes('phpmyadmin') && !c.argv.includes('-s'),
    );
    expect(preseed).toBeGreaterThanOrEqual(0);
    expect(preseed).toBeLessThan(install);
    expect(server.calls[preseed]?.options.stdin).toBe(
      'phpmyadmin phpmyadmin/dbconfig-install boolean false\nphpmyadmin phpmyadmin/reconfigure-webserver multiselect \n',
    );
    expect(server.debconf.get('phpmyadmin/dbconfig-install')).toBe('false');
    expect(server.mysql.databases.has('phpmyadmin')).toBe(false);
    expect(server.calls[install]?.argv).toContain('--no-install-recommends');
  });

  it('copies the tree for the user, links resolved, pointed at its own config and tmp/', async () => {
    const server = debianServer();
    const ctx = makeContext(server.exec, site, { settings: { phpmyadminSource: 'debian' } });
    const calls = await runFilesStep(server, ctx, site, 'ensure phpMyAdmin files');
    const root = release(site);
    const nodes = underRelease(server, site);
    expect(nodes.filter(([, node]) => node.type === 'link' || node.owner !== 'alice')).toEqual([]);
    expect(server.fs.read(`${root}/js/vendor/jquery/jquery.min.js`)).toBe('/* jQuery */');
    const vendor = server.fs.read(`${root}/libraries/vendor_config.php`) ?? '';
    expect(vendor).toContain("'configFile' => ROOT_PATH . 'config.inc.php',");
    expect(vendor).not.toContain('/etc/phpmyadmin');
    expect(server.fs.get(`${root}/tmp`)).toMatchObject({ type: 'dir', mode: '700', owner: 'alice' });
    for (const call of calls.filter((c) => c.argv.some((arg) => arg.startsWith('/home/alice')))) {
      expect({ argv: call.argv, asUser: call.options.asUser }).toEqual({ argv: call.argv, asUser: 'alice' });
    }
  });
});

describe('WORDPRESS_SOURCE / PHPMYADMIN_SOURCE values (validated once, at start)', () => {
  it.each([['debian'], ['https://wordpress.org/latest.tar.gz'], ['/usr/share/wordpress']])('accepts %s', (value) => {
    expect(appSourceProblem(value)).toBeNull();
  });
  it.each([['ftp://example.com/wp.tgz'], ['usr/share/wordpress'], ['/srv/../etc'], ['Debian '], ['https://exa mple.com/x']])(
    'refuses %j',
    (value) => {
      expect(appSourceProblem(value)).toMatch(/debian|URL/);
    },
  );
});
