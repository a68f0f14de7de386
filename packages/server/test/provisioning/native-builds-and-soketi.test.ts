import { SITE_TYPE_IDS } from '@siteplane/contract';
import { describe, expect, it } from 'vitest';
import { CommandFailed } from '../../src/provisioning/executor.js';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { StepCommandFailed } from '../../src/provisioning/steps/commands.js';
import { ensureBuildTools } from '../../src/provisioning/steps/ensure-build-tools.js';
import { installSoketi } from '../../src/provisioning/steps/frameworks/install-soketi.js';
import { explainSoketiInstallFailure, SOKETI_UNREACHABLE } from '../../src/provisioning/steps/frameworks/soketi-source.js';
import { makeContext, runSteps } from './support/context.js';
import { preinstall } from './support/fake-packages.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

const commands = (server: FakeServer) => server.calls.map((c) => c.argv.join(' '));

describe('build tools for frameworks that compile native modules (node-gyp)', () => {
  it('only Strapi and Directus list them, before their npm install', () => {
    const withTools = SITE_TYPE_IDS.filter((type) =>
      recipeFor(type)
        .create(siteOf(type))
        .some((step) => step.name === 'ensure build tools'),
    );
    expect(withTools).toEqual(['strapi', 'directus']);
    const names = recipeFor('strapi')
      .create(siteOf('strapi'))
      .map((step) => step.name);
    expect(names.indexOf('ensure build tools')).toBeLessThan(names.indexOf('install Strapi 5 from npm'));
  });

  it("installs Debian's build-essential and python3 once; a second run only checks", async () => {
    const server = new FakeServer();
    await ensureBuildTools().run(makeContext(server.exec, siteOf('directus')));
    expect(server.apt.installed.has('build-essential')).toBe(true);
    expect(server.apt.installed.has('python3')).toBe(true);
    server.calls.length = 0;
    const ctx = makeContext(server.exec, siteOf('directus'));
    await ensureBuildTools().run(ctx);
    expect(commands(server).some((c) => c.startsWith('apt-get'))).toBe(false);
    expect(ctx.logs).toEqual(['build-essential and python3 are installed']);
  });
});

describe('Soketi and uWebSockets.js, which npm fetches from github.com', () => {
  it('fails at once, before any npm work, on a server that cannot reach github.com', async () => {
    const server = new FakeServer();
    server.reachesGithub = false;
    const site = siteOf('soketi');
    server.addUser('alice');
    const failure = runSteps(makeContext(server.exec, site), [installSoketi()]);
    await expect(failure).rejects.toThrow(
      "Soketi needs uWebSockets.js, which npm fetches from github.com (https://github.com/uNetworking/uWebSockets.js.git), not from the npm registry; this server cannot reach it: fatal: unable to access 'https://github.com/uNetworking/uWebSockets.js.git/': Could not resolve host: github.com",
    );
    expect(commands(server).some((c) => c.startsWith('npm'))).toBe(false);
    // npm needs git for the dependency: installed from Debian first.
    expect(server.apt.installed.has('git')).toBe(true);
  });

  it('names the dependency when npm itself fails on it', () => {
    const npmFailure = new StepCommandFailed(
      ['npm', 'install', '@soketi/soketi@1'],
      {
        code: 254,
        stdout: '',
        stderr: 'npm error code ENOENT\nnpm error syscall spawn git\nnpm error enoent An unknown git error occurred\n',
      },
      'install @soketi/soketi@1',
    );
    const explained = explainSoketiInstallFailure(npmFailure) as Error;
    expect(explained.message).toBe(`${SOKETI_UNREACHABLE}: npm error enoent An unknown git error occurred`);
    const other = new StepCommandFailed(['npm'], { code: 1, stdout: '', stderr: 'npm error code E404\n' }, 'install');
    expect(explainSoketiInstallFailure(other)).toBe(other);
    expect(other).toBeInstanceOf(CommandFailed);
  });

  it('installs when github.com is reachable', async () => {
    const server = new FakeServer();
    preinstall(server, ['nodejs', 'npm']);
    server.addUser('alice');
    const ctx = makeContext(server.exec, siteOf('soketi'));
    await runSteps(ctx, [installSoketi()]);
    expect(ctx.logs).toContain(
      'https://github.com/uNetworking/uWebSockets.js.git is reachable (uWebSockets.js v20.10.0 for Soketi)',
    );
    expect(commands(server)).toContain('git ls-remote --exit-code https://github.com/uNetworking/uWebSockets.js.git v20.10.0');
  });
});
