import { describe, expect, it } from 'vitest';
import { aptCandidate, DPKG_LOCK_TIMEOUT_S, ensurePackages, UPDATE_STAMP } from '../../src/provisioning/steps/apt.js';
import { makeContext } from './support/context.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

// Package lists on a managed server: missing (debootstrap), old, or behind the mirror.
const commands = (server: FakeServer) => server.calls.map((c) => c.argv.slice(0, 2).join(' '));

describe('apt package lists (ARCHITECTURE §3: a server starts with stale or missing lists)', () => {
  it('fetches the lists on a server that never had them, then installs; one probe per job', async () => {
    const server = new FakeServer();
    server.apt.lists = 'missing';
    const ctx = makeContext(server.exec, siteOf('php'));
    await ensurePackages(ctx, ['nginx']);
    await ensurePackages(ctx, ['curl']);
    expect(commands(server)).toEqual([
      'dpkg-query -W',
      'find /var/lib/apt/lists',
      'apt-get update',
      'install -D',
      'apt-get install',
      'dpkg-query -W',
      'apt-get install',
    ]);
    expect(server.apt.installed.has('nginx')).toBe(true);
    expect(server.fs.get(UPDATE_STAMP)).toMatchObject({ type: 'file', mode: '644', owner: 'root' });
    expect(ctx.logs).toContain('the server has no package lists yet: fetching them');
  });

  it('refreshes lists older than a day, and leaves fresh ones alone', async () => {
    const stale = new FakeServer();
    stale.apt.lists = 'stale';
    await ensurePackages(makeContext(stale.exec, siteOf('php')), ['nginx']);
    expect(commands(stale)).toContain('apt-get update');

    const fresh = new FakeServer();
    await ensurePackages(makeContext(fresh.exec, siteOf('php')), ['nginx']);
    expect(commands(fresh)).not.toContain('apt-get update');
  });

  it('refreshes once and retries once when the install fails as on outdated lists (404 from the mirror)', async () => {
    const server = new FakeServer();
    server.apt.behindMirror = true;
    const ctx = makeContext(server.exec, siteOf('php'));
    await ensurePackages(ctx, ['nginx']);
    expect(commands(server).filter((c) => c.startsWith('apt-get'))).toEqual([
      'apt-get install',
      'apt-get update',
      'apt-get install',
    ]);
    expect(server.apt.installed.has('nginx')).toBe(true);
    expect(ctx.logs).toContain('install nginx failed as on outdated package lists; refreshing them and trying once more');
  });

  it('does not retry a failure that a refresh cannot fix, nor retry more than once', async () => {
    const server = new FakeServer();
    server.script((argv) => argv[0] === 'apt-get' && argv[1] === 'install', {
      code: 100,
      stderr: 'E: Sub-process /usr/bin/dpkg returned an error code (1)\n',
    });
    await expect(ensurePackages(makeContext(server.exec, siteOf('php')), ['nginx'])).rejects.toThrow(/dpkg returned an error/);
    expect(commands(server).filter((c) => c.startsWith('apt-get'))).toEqual(['apt-get install']);

    const unknown = new FakeServer();
    await expect(ensurePackages(makeContext(unknown.exec, siteOf('php')), ['no-such-package'])).rejects.toThrow(
      /Unable to locate package no-such-package/,
    );
    expect(commands(unknown).filter((c) => c.startsWith('apt-get'))).toEqual([
      'apt-get install',
      'apt-get update',
      'apt-get install',
    ]);
  });

  it('reads a candidate only from fetched lists: "(none)" on empty lists is not "not available"', async () => {
    const server = new FakeServer();
    server.apt.lists = 'missing';
    expect(await aptCandidate(makeContext(server.exec, siteOf('php')), 'nginx')).toBe('1.22.1-9+deb12u1');
    expect(commands(server)).toEqual(['find /var/lib/apt/lists', 'apt-get update', 'install -D', 'apt-cache policy']);
  });

  it('makes every apt-get call wait for the dpkg lock instead of failing at once', async () => {
    const server = new FakeServer();
    server.apt.lists = 'missing';
    await ensurePackages(makeContext(server.exec, siteOf('php')), ['nginx']);
    const aptGets = server.calls.filter((c) => c.argv[0] === 'apt-get').length;
    expect(aptGets).toBe(2);
    expect(server.apt.lockTimeouts).toEqual([DPKG_LOCK_TIMEOUT_S, DPKG_LOCK_TIMEOUT_S]);
  });
});
