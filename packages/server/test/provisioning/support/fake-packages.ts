import type { CommandResult, RunOptions } from '../../../src/provisioning/executor.js';
import { DEBIAN_APPS, installDebianApp, simulateInstall } from './fake-debian-apps.js';
import type { FakeServer } from './fake-server.js';

/**
 * Debian 12's package world as the fake server sees it: what is installed, what the configured
 * repositories offer (Debian's own, plus the third-party ones a step added and `apt-get update`
 * read), and what installing a package leaves on the server.
 */
export interface AptState {
  installed: Set<string>;
  /** Sources read by the last `apt-get update` (file names under sources.list.d). */
  updatedSources: Set<string>;
  /**
   * The package lists as the age probe sees them: `missing` (debootstrap: every package is
   * "Unable to locate"), `stale` (no list or stamp younger than a day) or `fresh`.
   */
  lists: 'missing' | 'stale' | 'fresh';
  /** The lists name versions the mirror no longer has: installs fail with 404 until `apt-get update`. */
  behindMirror: boolean;
  /** Whether every apt-get call passed a dpkg lock timeout. */
  lockTimeouts: number[];
}

/** A server that fetched its lists recently (most tests); `lists: 'missing'` for a pristine one. */
export function newAptState(): AptState {
  return {
    installed: new Set(['ca-certificates']),
    updatedSources: new Set(),
    lists: 'fresh',
    behindMirror: false,
    lockTimeouts: [],
  };
}

const ok = (stdout = ''): CommandResult => ({ code: 0, stdout, stderr: '' });
const fail = (stderr: string, code = 1): CommandResult => ({ code, stdout: '', stderr: `${stderr}\n` });

/** apt-get, apt-cache and the lists' age probe (`find` over /var/lib/apt/lists). */
export function aptCommand(server: FakeServer, argv: string[], options: RunOptions): CommandResult | null {
  const [cmd, ...args] = argv;
  const { apt } = server;
  if (cmd === 'find' && args[0] === '/var/lib/apt/lists') {
    if (apt.lists === 'missing') return ok();
    const age = apt.lists === 'fresh' ? 'fresh' : 'stale';
    return ok(`${age} deb.debian.org_debian_dists_bookworm_main_binary-amd64_Packages\n`);
  }
  if (cmd === 'apt-cache') {
    const version = candidate(server, args[2]!);
    return ok(
      `${args[2]}:\n  Installed: ${apt.installed.has(args[2]!) ? version : '(none)'}\n  Candidate: ${version ?? '(none)'}\n`,
    );
  }
  if (cmd !== 'apt-get') return null;
  if (options.env?.DEBIAN_FRONTEND !== 'noninteractive')
    return fail('apt-get without DEBIAN_FRONTEND=noninteractive would prompt');
  // `-o NAME=VALUE` pairs are configuration, not package names.
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '-o') {
      const [name, value] = args[++i]!.split('=');
      if (name === 'DPkg::Lock::Timeout') apt.lockTimeouts.push(Number(value));
    } else if (!arg.startsWith('-')) words.push(arg);
  }
  const [verb, ...names] = words;
  if (verb === 'update') {
    for (const path of server.fs.subtree('/etc/apt/sources.list.d'))
      if (path.endsWith('.list')) apt.updatedSources.add(path.split('/').pop()!);
    apt.lists = 'fresh';
    apt.behindMirror = false;
    return ok();
  }
  if (verb !== 'install') return fail(`unexpected apt-get ${args.join(' ')}`);
  if (args.includes('-s')) return simulateInstall(server, names);
  const missing = names.filter((name) => candidate(server, name) === null);
  if (missing.length > 0) return fail(`E: Unable to locate package ${missing[0]}`, 100);
  if (apt.behindMirror && names.some((name) => !apt.installed.has(name)))
    return fail(
      `E: Failed to fetch http://deb.debian.org/debian/pool/main/${names[0]}.deb  404  Not Found [IP: 151.101.2.132 80]\nE: Unable to fetch some archives, maybe run apt-get update or try with --fix-missing?`,
      100,
    );
  for (const name of names) installPackage(server, name);
  return ok();
}

const DEBIAN: Record<string, string> = {
  nginx: '1.22.1-9+deb12u1',
  curl: '7.88.1-10+deb12u8',
  'ca-certificates': '20230311',
  'mariadb-server': '1:10.11.11-0+deb12u1',
  'postgresql-15': '15.12-0+deb12u2',
  nodejs: '18.19.0+dfsg-6~deb12u2',
  npm: '9.2.0~ds1-1',
  'build-essential': '12.9',
  python3: '3.11.2-1+b1',
  git: '1:2.39.5-0+deb12u2',
};
const PHP_EXTENSIONS = ['fpm', 'cli', 'mysql', 'pgsql', 'mbstring', 'xml', 'curl', 'zip'];

export function candidate(server: FakeServer, name: string): string | null {
  // Empty lists know no package at all.
  if (server.apt.lists === 'missing') return null;
  const sources = server.apt.updatedSources;
  const php = /^php(\d\.\d)-(\w+)$/.exec(name);
  if (php && PHP_EXTENSIONS.includes(php[2]!)) {
    if (php[1] === '8.2') return '8.2.28-1~deb12u1';
    return sources.has('sury-php.list') ? `${php[1]}.0-1+0~sury` : null;
  }
  if (name === 'nodejs' && sources.has('nodesource.list')) {
    const line = server.fs.read('/etc/apt/sources.list.d/nodesource.list') ?? '';
    const major = /node_(\d+)\.x/.exec(line)?.[1];
    return `${major}.11.0-1nodesource1`;
  }
  if (name === 'mysql-server') return sources.has('mysql.list') ? '8.0.41-1debian12' : null;
  const pg = /^postgresql-(\d+)$/.exec(name);
  if (pg && pg[1] !== '15') return sources.has('pgdg.list') ? `${pg[1]}.18-1.pgdg120+1` : null;
  return DEBIAN[name] ?? DEBIAN_APPS[name] ?? null;
}

/** What installing a package leaves behind (config files, programs, stopped daemons). */
export function installPackage(server: FakeServer, name: string): void {
  server.apt.installed.add(name);
  const { fs } = server;
  const php = /^php(\d\.\d)-(\w+)$/.exec(name);
  if (name === 'nginx') {
    for (const dir of ['/etc/nginx/sites-available', '/etc/nginx/sites-enabled', '/etc/nginx/conf.d', '/var/log/nginx'])
      fs.mkdirp(dir);
    fs.write(
      '/etc/nginx/nginx.conf',
      'http {\n\t# server_names_hash_bucket_size 64;\n\tinclude /etc/nginx/sites-enabled/*;\n}\n',
    );
    server.programs.add('nginx');
  } else if (php?.[2] === 'fpm') {
    fs.mkdirp(`/etc/php/${php[1]}/fpm/pool.d`);
    fs.write(`/etc/php/${php[1]}/fpm/php-fpm.conf`, `include=/etc/php/${php[1]}/fpm/pool.d/*.conf\n`);
    fs.write(`/etc/php/${php[1]}/fpm/pool.d/www.conf`, '[www]\n');
    server.programs.add(`php-fpm${php[1]}`);
  } else if (php?.[2] === 'cli') {
    server.programs.add(`php${php[1]}`);
  } else if (name === 'nodejs') {
    server.nodeVersion = (candidate(server, 'nodejs') ?? '').replace(/[-+~].*$/, '');
    server.programs.add('node');
    if (server.apt.updatedSources.has('nodesource.list')) server.programs.add('npm');
  } else if (name === 'npm') {
    server.programs.add('npm');
  } else if (name === 'mariadb-server' || name === 'mysql-server') {
    server.mysql.installed = true;
    fs.write(name === 'mariadb-server' ? '/etc/init.d/mariadb' : '/etc/init.d/mysql', '#!/bin/sh\n', { mode: '755' });
  } else if (/^postgresql-\d+$/.test(name)) {
    server.postgres.installed = true;
    fs.write('/etc/init.d/postgresql', '#!/bin/sh\n', { mode: '755' });
  } else installDebianApp(server, name);
}

/** A server as Debian 12 comes with Siteplane's baseline already installed (nginx, PHP 8.2, MariaDB). */
export function preinstall(server: FakeServer, packages: string[]): void {
  for (const name of packages) installPackage(server, name);
  if (server.mysql.installed) server.mysql.running = true;
  if (server.postgres.installed) server.postgres.running = true;
}
