import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import type { ProvisionedSite } from '../../src/provisioning/step.js';
import { ensureNode } from '../../src/provisioning/steps/ensure-node.js';
import { installDirectus } from '../../src/provisioning/steps/frameworks/install-directus.js';
import { npmNodeGypVersion } from '../../src/provisioning/steps/npm.js';
import { makeContext, runSteps } from './support/context.js';
import { preinstall } from './support/fake-packages.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

/**
 * Directus's sqlite3 brings node-gyp 8.x to the project's top, and npm runs the first node-gyp on
 * its scripts' PATH, the project's .bin before its own: on Debian 13's Python 3.13 (no distutils)
 * that one cannot build isolated-vm. The install pins node-gyp to the one npm ships.
 */
const dir = '/home/alice/directus.example.com/releases/directus';
const NPM_GYP = '/usr/local/lib/nodejs/v22.23.3/lib/node_modules/npm/node_modules/node-gyp';
const debian13 = () => {
  const server = new FakeServer();
  server.python = '3.13';
  server.reachesGithub = false;
  server.addUser('alice');
  return server;
};
const withNode22 = (site: ProvisionedSite) => ({ ...site, runtime: { node: { version: '22.x', action: 'install' as const } } });
const npmSource = (server: FakeServer, site: ProvisionedSite) =>
  makeContext(server.exec, site, { settings: { nodeSource: 'npm' } });
const packageJson = (server: FakeServer) => JSON.parse(server.fs.read(`${dir}/package.json`) ?? '{}');
const builtIsolatedVm = (server: FakeServer) =>
  server.fs.read(`${dir}/node_modules/isolated-vm/build/Release/isolated-vm.node`) !== undefined;

describe("npm's own node-gyp (npmNodeGypVersion)", () => {
  it('Node from the npm registry: the version of the node-gyp in npm’s tree, asked as root outside any site', async () => {
    const server = debian13();
    const ctx = npmSource(server, withNode22(siteOf('directus')));
    await ensureNode().run(ctx);
    expect(await npmNodeGypVersion(ctx)).toBe('13.0.0');
    const probe = server.calls.find((c) => c.argv.join(' ') === 'npm config get node-gyp');
    expect(probe?.options).toMatchObject({ sudo: true, cwd: '/' });
    expect(server.calls.some((c) => c.argv[0] === 'cat' && c.argv.at(-1) === `${NPM_GYP}/package.json`)).toBe(true);
  });

  it('none when npm names no node-gyp, its package.json has no version, or the server answers nothing', async () => {
    const server = new FakeServer();
    preinstall(server, ['nodejs', 'npm']);
    // Debian's npm names its node-gyp package's, absent here.
    expect(await npmNodeGypVersion(makeContext(server.exec, siteOf('directus')))).toBeNull();
    server.fs.mkdirp('/usr/share/nodejs/node-gyp');
    server.fs.write('/usr/share/nodejs/node-gyp/package.json', '{"version":"11.1.0 && rm"}');
    expect(await npmNodeGypVersion(makeContext(server.exec, siteOf('directus')))).toBeNull();
    server.fs.write('/usr/share/nodejs/node-gyp/package.json', '{"version":"11.1.0"}');
    expect(await npmNodeGypVersion(makeContext(server.exec, siteOf('directus')))).toBe('11.1.0');
    expect(await npmNodeGypVersion(makeContext(new FakeServer().exec, siteOf('directus')))).toBeNull();
  });
});

describe('Directus on Debian 13 (Python 3.13)', () => {
  it('pins node-gyp to npm’s own, so isolated-vm builds and Directus bootstraps', async () => {
    const server = debian13();
    const site = withNode22(siteOf('directus'));
    const ctx = npmSource(server, site);
    await runSteps(ctx, recipeFor('directus').create(site));
    expect(packageJson(server).overrides).toEqual({ 'node-gyp': '13.0.0' });
    expect(server.fs.read(`${dir}/node_modules/node-gyp/package.json`)).toContain('"13.0.0"');
    expect(builtIsolatedVm(server)).toBe(true);
    expect(ctx.logs).toContain("native modules build with node-gyp 13.0.0, npm's own (overrides in package.json)");
    const pin = server.calls.find((c) => c.argv.slice(0, 3).join(' ') === 'npm pkg set');
    expect(pin?.options.asUser).toBe('alice');
  });

  it('without the pin sqlite3’s node-gyp 8 builds isolated-vm and fails, as on the real host', async () => {
    const server = debian13();
    const site = withNode22(siteOf('directus'));
    const ctx = npmSource(server, site);
    await ensureNode().run(ctx);
    server.script((argv) => argv.join(' ') === 'npm config get node-gyp', { stdout: '\n' });
    await expect(installDirectus(11).run(ctx)).rejects.toThrow(/No module named 'distutils'[\s\S]*node-gyp -v v8\.4\.1/);
    expect(ctx.logs).toContain("npm names no node-gyp of its own; the project's dependencies decide which one builds");
    expect(packageJson(server).overrides).toBeUndefined();
  });

  it('Debian 12 (Python 3.11) builds with node-gyp 8 too: the pin changes nothing there but the version', async () => {
    const server = debian13();
    server.python = '3.11';
    const site = withNode22(siteOf('directus'));
    const ctx = npmSource(server, site);
    await ensureNode().run(ctx);
    server.script((argv) => argv.join(' ') === 'npm config get node-gyp', { stdout: '\n' });
    await installDirectus(11).run(ctx);
    expect(builtIsolatedVm(server)).toBe(true);
  });

  it('an install that failed with node-gyp 8 starts its node_modules over with the pin', async () => {
    const server = debian13();
    const site = withNode22(siteOf('directus'));
    const ctx = npmSource(server, site);
    await ensureNode().run(ctx);
    // What the failed attempt left: scripts allowed, no override, isolated-vm unbuilt beside node-gyp 8.
    const own = { owner: 'alice', group: 'alice' };
    server.fs.mkdirp(`${dir}/node_modules/isolated-vm`, own);
    server.fs.mkdirp(`${dir}/node_modules/node-gyp`, own);
    server.fs.write(`${dir}/node_modules/node-gyp/package.json`, '{"version":"8.4.1"}', own);
    server.fs.write(`${dir}/package.json`, '{"allowScripts":{"isolated-vm":true}}', own);
    await installDirectus(11).run(ctx);
    const rm = server.calls.find((c) => c.argv[0] === 'rm' && c.argv.at(-1) === `${dir}/node_modules`);
    expect(rm?.options.asUser).toBe('alice');
    expect(packageJson(server)).toMatchObject({ allowScripts: { 'isolated-vm': true }, overrides: { 'node-gyp': '13.0.0' } });
    expect(builtIsolatedVm(server)).toBe(true);
  });
});
