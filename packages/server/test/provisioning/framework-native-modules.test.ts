import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import type { ProvisionedSite } from '../../src/provisioning/step.js';
import { ensureNode } from '../../src/provisioning/steps/ensure-node.js';
import { adminEmail, installDirectus } from '../../src/provisioning/steps/frameworks/install-directus.js';
import { installStrapi } from '../../src/provisioning/steps/frameworks/install-strapi.js';
import { headerVersion, nativeBuildEnv } from '../../src/provisioning/steps/npm.js';
import { makeContext, runSteps } from './support/context.js';
import { nodeVersionHeader } from './support/fake-node-commands.js';
import { preinstall } from './support/fake-packages.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

/**
 * A server that reaches Debian's mirror and the npm registry only: native modules get neither their
 * prebuilt binaries (github.com) nor Node's headers (nodejs.org), and npm 12 runs no dependency's
 * install script that package.json does not allow.
 */
const NODEDIR = '/usr/local/lib/nodejs/v22.23.3';
const isolatedServer = () => {
  const server = new FakeServer();
  server.reachesGithub = false;
  server.reachesNodejsOrg = false;
  server.addUser('alice');
  return server;
};
const withNode22 = (site: ProvisionedSite) => ({ ...site, runtime: { node: { version: '22.x', action: 'install' as const } } });
const npmSource = (server: FakeServer, site: ProvisionedSite) =>
  makeContext(server.exec, site, { settings: { nodeSource: 'npm' } });
const npmInstalls = (server: FakeServer) => server.calls.filter((c) => c.argv[0] === 'npm' && c.argv[1] === 'install');
const packageJson = (server: FakeServer, dir: string) => JSON.parse(server.fs.read(`${dir}/package.json`) ?? '{}');

describe("node-gyp pointed at the server's own Node headers (npm_config_nodedir)", () => {
  it('Node from the npm registry: its versioned tree, found through the links', async () => {
    const server = isolatedServer();
    const ctx = npmSource(server, withNode22(siteOf('directus')));
    await ensureNode().run(ctx);
    expect(await nativeBuildEnv(ctx)).toEqual({ npm_config_nodedir: NODEDIR });
  });

  it("Debian's node: /usr only when libnode-dev's headers are there and of the same version", async () => {
    const server = new FakeServer();
    preinstall(server, ['nodejs', 'npm']);
    const ctx = makeContext(server.exec, siteOf('directus'));
    const version = server.nodeVersion!;
    expect(await nativeBuildEnv(ctx)).toEqual({});
    server.fs.mkdirp('/usr/include/node');
    server.fs.write('/usr/include/node/node_version.h', nodeVersionHeader('20.1.0'));
    expect(await nativeBuildEnv(ctx)).toEqual({});
    server.fs.write('/usr/include/node/node_version.h', nodeVersionHeader(version));
    expect(await nativeBuildEnv(ctx)).toEqual({ npm_config_nodedir: '/usr' });
  });

  it('no node at all (a dry run answers nothing): no setting', async () => {
    expect(await nativeBuildEnv(makeContext(new FakeServer().exec, siteOf('directus')))).toEqual({});
    expect(headerVersion('#define NODE_MAJOR_VERSION 22\n#define NODE_MINOR_VERSION 23\n')).toBeNull();
  });
});

describe('Directus on a server without github.com and nodejs.org', () => {
  const dir = '/home/alice/directus.example.com/releases/directus';

  it('allows isolated-vm only, builds it against the local headers, bootstraps', async () => {
    const server = isolatedServer();
    const site = withNode22(siteOf('directus'));
    const ctx = npmSource(server, site);
    await runSteps(ctx, recipeFor('directus').create(site));
    expect(packageJson(server, dir).allowScripts).toEqual({ 'isolated-vm': true });
    const install = npmInstalls(server).find((c) => c.argv.includes('directus@11'));
    expect(install?.options.env).toMatchObject({ npm_config_nodedir: NODEDIR, HOME: '/home/alice' });
    expect(server.fs.read(`${dir}/node_modules/isolated-vm/build/Release/isolated-vm.node`)).toBeDefined();
    expect(ctx.logs).toContain('npm may run the install scripts of isolated-vm (allowScripts in package.json)');
  });

  it('a site on SQLite allows sqlite3 as well', async () => {
    const server = isolatedServer();
    const site = withNode22(siteOf('directus', { database: null }));
    await runSteps(npmSource(server, site), recipeFor('directus').create(site));
    expect(packageJson(server, dir).allowScripts).toEqual({ 'isolated-vm': true, sqlite3: true });
  });

  it('an earlier install whose native builds were blocked starts its node_modules over', async () => {
    const server = isolatedServer();
    const site = withNode22(siteOf('directus'));
    const ctx = npmSource(server, site);
    await ensureNode().run(ctx);
    // What the attempt before allowScripts left: package.json without it, isolated-vm unbuilt.
    server.fs.mkdirp(`${dir}/node_modules/isolated-vm`, { owner: 'alice', group: 'alice' });
    server.fs.write(`${dir}/package.json`, '{"name":"directus-site","private":true}', { owner: 'alice', group: 'alice' });
    await installDirectus(11).run(ctx);
    const rm = server.calls.find((c) => c.argv[0] === 'rm' && c.argv.at(-1) === `${dir}/node_modules`);
    expect(rm?.options.asUser).toBe('alice');
    expect(server.fs.read(`${dir}/node_modules/isolated-vm/build/Release/isolated-vm.node`)).toBeDefined();
  });

  it('a resumed install that already allows them and uses npm’s node-gyp neither edits package.json nor removes node_modules', async () => {
    const server = isolatedServer();
    const site = withNode22(siteOf('directus'));
    const ctx = npmSource(server, site);
    await ensureNode().run(ctx);
    server.fs.mkdirp(dir, { owner: 'alice', group: 'alice' });
    const pkg = '{"allowScripts":{"isolated-vm":true},"overrides":{"node-gyp":"13.0.0"}}';
    server.fs.write(`${dir}/package.json`, pkg, { owner: 'alice', group: 'alice' });
    server.calls.length = 0;
    await installDirectus(11).run(ctx);
    expect(server.calls.some((c) => c.argv[0] === 'rm' || (c.argv[1] === 'pkg' && c.argv[2] === 'set'))).toBe(false);
  });

  it('without the local headers node-gyp has nothing to build with, as on the real server', async () => {
    const server = isolatedServer();
    preinstall(server, ['nodejs', 'npm']);
    const site = siteOf('directus');
    await expect(runSteps(makeContext(server.exec, site), [installDirectus(11)])).rejects.toThrow(/nodejs\.org/);
  });
});

describe('Strapi on a server without github.com and nodejs.org', () => {
  const dir = '/home/alice/strapi.example.com/releases/strapi';

  it('scaffolds without installing, allows better-sqlite3, installs with pg against the local headers', async () => {
    const server = isolatedServer();
    const site = withNode22(siteOf('strapi'));
    const ctx = npmSource(server, site);
    await runSteps(ctx, recipeFor('strapi').create(site));
    const scaffold = server.calls.find((c) => c.argv[1] === 'exec');
    expect(scaffold?.argv).toContain('create-strapi-app@5.41.0');
    expect(scaffold?.argv).toContain('--no-install');
    expect(scaffold?.argv).not.toContain('--install');
    expect(packageJson(server, dir).allowScripts).toEqual({ 'better-sqlite3': true });
    const installs = npmInstalls(server).filter((c) => c.options.asUser === 'alice');
    expect(installs.map((c) => c.argv.slice(0, 3))).toEqual([['npm', 'install', 'pg']]);
    expect(installs[0]?.options.env).toMatchObject({ npm_config_nodedir: NODEDIR });
    expect(server.fs.read(`${dir}/node_modules/better-sqlite3/build/Release/better-sqlite3.node`)).toBeDefined();
  });

  it('takes the newest release the registry serves completely, and says why', async () => {
    const server = isolatedServer();
    // A mirror that has 5.41.0 of Strapi's own packages but not of its admin panel.
    delete server.registry.get('@strapi/admin')?.['5.41.0'];
    const site = withNode22(siteOf('strapi'));
    const ctx = npmSource(server, site);
    await runSteps(ctx, recipeFor('strapi').create(site));
    expect(server.calls.find((c) => c.argv[1] === 'exec')?.argv).toContain('create-strapi-app@5.40.0');
    expect(ctx.logs).toContain(
      'the npm registry does not serve every package of Strapi 5.41.0 (no @strapi/admin@5.41.0); using 5.40.0',
    );
    expect(packageJson(server, dir).dependencies['@strapi/strapi']).toBe('5.40.0');
  });

  it('fails, naming what is missing, when no recent release is complete', async () => {
    const server = isolatedServer();
    delete server.registry.get('@strapi/database')?.['5.41.0'];
    delete server.registry.get('@strapi/plugin-cloud')?.['5.40.0'];
    const site = withNode22(siteOf('strapi'));
    const ctx = npmSource(server, site);
    await ensureNode().run(ctx);
    await expect(installStrapi(5).run(ctx)).rejects.toThrow(
      'the npm registry does not serve a complete Strapi 5 release: 5.41.0 (no @strapi/database@5.41.0); 5.40.0 (no @strapi/plugin-cloud@5.40.0)',
    );
    expect(server.calls.some((c) => c.argv[0] === 'npm')).toBe(false);
  });
});

describe("Directus's first admin", () => {
  it('is admin@<domain>, or admin@example.com under a special-use name Directus refuses in an address', async () => {
    expect(adminEmail('cms.example.org')).toBe('admin@cms.example.org');
    expect(adminEmail('directus-1.siteplane.test')).toBe('admin@example.com');
    expect(adminEmail('intranet.corp.INTERNAL')).toBe('admin@example.com');
    const server = new FakeServer();
    const site = siteOf('directus', { domain: 'cms.siteplane.test' });
    await runSteps(makeContext(server.exec, site), recipeFor('directus').create(site));
    const config = server.fs.read('/home/alice/cms.siteplane.test/releases/directus/directus.config.json') ?? '{}';
    expect(JSON.parse(config).ADMIN_EMAIL).toBe('admin@example.com');
  });
});
