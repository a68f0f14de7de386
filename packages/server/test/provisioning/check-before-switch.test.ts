import { spawn } from 'node:child_process';
import { chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ASK_RELEASE, releaseRequest, releaseRoot } from '../../src/provisioning/deploy/check-before-switch.js';
import { releasePaths } from '../../src/provisioning/deploy/release-paths.js';
import type { ProvisionedSite } from '../../src/provisioning/step.js';

/**
 * The release asked before the switch (issue 11 item 8): ASK_RELEASE run by this machine's perl
 * against a release directory, its PHP half against a FastCGI responder written here from the
 * FastCGI 1.0 specification (records, name-value pairs, END_REQUEST), as PHP-FPM answers.
 */
let dir: string;
let servers: Server[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'siteplane-before-switch-'));
  servers = [];
});
afterEach(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

interface Asked {
  code: number;
  stdout: string;
}

function ask(args: { mode: 'static' | 'php'; path: string; query?: string; secs?: number; socket?: string; tls?: boolean }) {
  const argv = [
    '-e',
    ASK_RELEASE,
    '--',
    args.mode,
    join(dir, 'release'),
    args.path,
    args.query ?? '',
    String(args.secs ?? 5),
    args.socket ?? join(dir, 'none.sock'),
    'shop.example.com',
    args.tls ? 'on' : 'off',
  ];
  return new Promise<Asked>((resolve) => {
    const child = spawn('perl', argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.on('close', (code) => resolve({ code: code ?? -1, stdout: stdout.trim() }));
  });
}

function files(entries: Record<string, string>): void {
  for (const [name, content] of Object.entries(entries)) {
    const path = join(dir, 'release', name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, content);
  }
}

/** A FastCGI responder on a unix socket: records what it was sent, answers `reply` (or nothing). */
function fastcgi(reply: string | null, options: { closeEarly?: boolean } = {}) {
  const socket = join(dir, 'fpm.sock');
  const seen: Record<string, string>[] = [];
  const server = createServer((connection: Socket) => {
    let buffer = Buffer.alloc(0);
    let params = Buffer.alloc(0);
    connection.on('data', (chunk) => {
      buffer = Buffer.concat([buffer, chunk]);
      while (buffer.length >= 8) {
        const type = buffer[1]!;
        const length = buffer.readUInt16BE(4);
        const padding = buffer[6]!;
        if (buffer.length < 8 + length + padding) return;
        const content = buffer.subarray(8, 8 + length);
        buffer = buffer.subarray(8 + length + padding);
        if (type === 4 && length > 0) params = Buffer.concat([params, content]);
        if (type === 4 && length === 0) seen.push(nameValues(params));
        if (type === 5 && length === 0) respond(connection);
      }
    });
  });
  function respond(connection: Socket): void {
    if (options.closeEarly) return void connection.end();
    if (reply === null) return;
    const out = Buffer.from(reply);
    const end = Buffer.alloc(8);
    connection.end(Buffer.concat([record(6, out), record(6, Buffer.alloc(0)), record(3, end)]));
  }
  servers.push(server);
  return new Promise<{ socket: string; seen: Record<string, string>[] }>((resolve) =>
    server.listen(socket, () => resolve({ socket, seen })),
  );
}

function record(type: number, content: Buffer): Buffer {
  const header = Buffer.from([1, type, 0, 1, content.length >> 8, content.length & 0xff, 0, 0]);
  return Buffer.concat([header, content]);
}

function nameValues(data: Buffer): Record<string, string> {
  const out: Record<string, string> = {};
  let at = 0;
  const length = () => {
    if (data[at]! < 128) return data[at++]!;
    const value = data.readUInt32BE(at) & 0x7fffffff;
    at += 4;
    return value;
  };
  while (at < data.length) {
    const name = length();
    const value = length();
    const key = data.subarray(at, at + name).toString();
    at += name;
    out[key] = data.subarray(at, at + value).toString();
    at += value;
  }
  return out;
}

describe('a static release, looked up as the vhost would (try_files $uri $uri/ $uri.html =404, index)', () => {
  it('finds files, indexes and .html names; a directory without an index is 403, nothing is 404', async () => {
    files({ 'index.html': 'v3', 'docs/a.html': 'a', 'docs/guide/index.htm': 'g', 'empty/.keep': '' });
    expect(await ask({ mode: 'static', path: '/' })).toEqual({ code: 0, stdout: '200 index' });
    expect(await ask({ mode: 'static', path: '/index.html' })).toEqual({ code: 0, stdout: '200 file' });
    expect(await ask({ mode: 'static', path: '/docs/a' })).toEqual({ code: 0, stdout: '200 file' });
    expect(await ask({ mode: 'static', path: '/docs/guide' })).toEqual({ code: 0, stdout: '200 index' });
    expect(await ask({ mode: 'static', path: '/empty/' })).toEqual({ code: 1, stdout: '403 directory without an index' });
    expect(await ask({ mode: 'static', path: '/missing' })).toEqual({ code: 1, stdout: '404 no such file' });
  });

  it.runIf(process.getuid?.() === 0)('follows a link only to a file of its owner, as disable_symlinks if_not_owner', async () => {
    files({ 'index.html': 'v3', 'own.txt': 'mine' });
    const foreign = join(dir, 'foreign');
    mkdirSync(foreign);
    writeFileSync(join(foreign, 'secret.txt'), 'theirs');
    chownSync(foreign, 65534, 65534);
    chownSync(join(foreign, 'secret.txt'), 65534, 65534);
    symlinkSync(join(dir, 'release', 'own.txt'), join(dir, 'release', 'mine.txt'));
    symlinkSync(join(foreign, 'secret.txt'), join(dir, 'release', 'stolen.txt'));
    symlinkSync(foreign, join(dir, 'release', 'theirs'));
    expect(await ask({ mode: 'static', path: '/mine.txt' })).toEqual({ code: 0, stdout: '200 file' });
    expect(await ask({ mode: 'static', path: '/stolen.txt' })).toEqual({ code: 1, stdout: '404 no such file' });
    expect(await ask({ mode: 'static', path: '/theirs/secret.txt' })).toEqual({ code: 1, stdout: '404 no such file' });
  });

  it('a release without its index (the broken deploy) fails at /', async () => {
    files({ 'about.html': 'about' });
    expect(await ask({ mode: 'static', path: '/' })).toEqual({ code: 1, stdout: '403 directory without an index' });
  });
});

describe('a PHP release, asked through FastCGI as nginx would ask PHP-FPM', () => {
  it('sends the request to the front controller with nginx’s parameters, the script in the release', async () => {
    files({ 'index.php': '<?php' });
    const fpm = await fastcgi('Content-type: text/html\r\n\r\nhello');
    expect(await ask({ mode: 'php', path: '/up', query: 'deep=1', socket: fpm.socket, tls: true })).toEqual({
      code: 0,
      stdout: '200 PHP-FPM',
    });
    expect(fpm.seen).toHaveLength(1);
    expect(fpm.seen[0]).toMatchObject({
      REQUEST_METHOD: 'GET',
      SCRIPT_FILENAME: join(dir, 'release', 'index.php'),
      SCRIPT_NAME: '/index.php',
      DOCUMENT_ROOT: join(dir, 'release'),
      REQUEST_URI: '/up?deep=1',
      QUERY_STRING: 'deep=1',
      HTTP_HOST: 'shop.example.com',
      SERVER_NAME: 'shop.example.com',
      HTTPS: 'on',
      SERVER_PORT: '443',
    });
  });

  it('takes the status from the Status header, a redirect from Location, and fails on 5xx', async () => {
    files({ 'index.php': '<?php', 'admin/index.php': '<?php' });
    const broken = await fastcgi('Status: 500 Internal Server Error\r\nContent-type: text/html\r\n\r\nbroken');
    expect(await ask({ mode: 'php', path: '/', socket: broken.socket })).toEqual({ code: 1, stdout: '500 PHP-FPM' });
    expect(broken.seen[0]).toMatchObject({ SCRIPT_NAME: '/index.php', SERVER_PORT: '80' });
    expect(broken.seen[0]).not.toHaveProperty('HTTPS');
    await new Promise((resolve) => servers.pop()!.close(resolve));
    const redirect = await fastcgi('Location: /login\r\n\r\n');
    expect(await ask({ mode: 'php', path: '/admin', socket: redirect.socket })).toEqual({ code: 0, stdout: '302 PHP-FPM' });
    expect(redirect.seen[0]?.SCRIPT_FILENAME).toBe(join(dir, 'release', 'admin', 'index.php'));
  });

  it('a named script must exist; a release without its front controller fails without asking', async () => {
    files({ 'public.txt': 'x' });
    const fpm = await fastcgi('\r\n\r\n');
    expect(await ask({ mode: 'php', path: '/status.php', socket: fpm.socket })).toEqual({
      code: 1,
      stdout: '404 no such script',
    });
    expect(await ask({ mode: 'php', path: '/', socket: fpm.socket })).toEqual({
      code: 1,
      stdout: '403 directory without an index',
    });
    expect(await ask({ mode: 'php', path: '/x', socket: fpm.socket })).toEqual({ code: 1, stdout: '404 no front controller' });
    expect(await ask({ mode: 'php', path: '/public.txt', socket: fpm.socket })).toEqual({ code: 0, stdout: '200 file' });
    expect(fpm.seen).toEqual([]);
  });

  it('no pool, a pool that hangs up, a pool that never answers: 000', async () => {
    files({ 'index.php': '<?php' });
    expect((await ask({ mode: 'php', path: '/', socket: join(dir, 'absent.sock') })).stdout).toMatch(/^000 no PHP-FPM at /);
    const closing = await fastcgi(null, { closeEarly: true });
    expect(await ask({ mode: 'php', path: '/', socket: closing.socket })).toEqual({
      code: 1,
      stdout: '000 PHP-FPM closed the connection',
    });
    await new Promise((resolve) => servers.pop()!.close(resolve));
    const silent = await fastcgi(null);
    expect(await ask({ mode: 'php', path: '/', socket: silent.socket, secs: 1 })).toEqual({
      code: 1,
      stdout: '000 no answer in time',
    });
  });
});

describe('where the health path lands in the release', () => {
  const site = { domain: 'shop.example.com', user: 'shop' } as unknown as ProvisionedSite;

  it('decodes the path as nginx’s $uri, keeps the query, and will not place a path with . or .. segments', () => {
    expect(releaseRequest('/')).toEqual({ path: '/', query: '' });
    expect(releaseRequest('/caf%C3%A9/menu?lang=fr&x=1')).toEqual({ path: '/café/menu', query: 'lang=fr&x=1' });
    expect(releaseRequest('/a/../b')).toBeNull();
    expect(releaseRequest('/a/%2e%2e/b')).toBeNull();
    expect(releaseRequest('/%E0%A4%A')).toBeNull();
    expect(() => releaseRequest('no-slash')).toThrow(/must start with/);
  });

  it('moves the vhost’s root from current to the release, and refuses one outside current', () => {
    const paths = releasePaths(site, '20261127T000001Z-v3');
    const { current } = paths.layout;
    expect(releaseRoot(paths, current)).toBe(paths.dir);
    expect(releaseRoot(paths, `${current}/public`)).toBe(`${paths.dir}/public`);
    expect(() => releaseRoot(paths, `${current}-other/public`)).toThrow(/not under/);
  });
});
