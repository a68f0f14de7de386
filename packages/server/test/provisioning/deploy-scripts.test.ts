import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ACTIVATE, BESIDE, GO_LIVE } from '../../src/provisioning/deploy/activate-process.js';
import { EXPORT, MIRROR } from '../../src/provisioning/deploy/fetch-git.js';
import { FREE_PORT } from '../../src/provisioning/deploy/free-port.js';
import { HEALTH } from '../../src/provisioning/deploy/health-check.js';
import { DOTENV_BEGIN, DOTENV_BLOCK, DOTENV_END, dotenvBlock } from '../../src/provisioning/deploy/laravel-dotenv.js';
import { renderCommandLauncher, renderLauncher, startOf } from '../../src/provisioning/deploy/launcher.js';
import { LINK_SHARED } from '../../src/provisioning/deploy/link-shared.js';
import type { DeployPlan } from '../../src/provisioning/deploy/plan.js';
import { PM2_RELOAD_JS } from '../../src/provisioning/deploy/pm2-reload.js';
import { LIST } from '../../src/provisioning/deploy/prune.js';
import { DEPENDENCY_STAMP, hookCommand, reusingNpmCi } from '../../src/provisioning/deploy/reuse-node-modules.js';
import { STAND_IN, STOP_STAND_IN } from '../../src/provisioning/deploy/stand-in.js';
import { SWITCH } from '../../src/provisioning/deploy/switch-current.js';
import { APPEND, UNPACK } from '../../src/provisioning/deploy/unpack-artifact.js';
import { CANCEL, exportLines, HOOK } from '../../src/provisioning/deploy/user-command.js';
import { renderEnvFile, WRITE, WRITE_ENVIRONMENT } from '../../src/provisioning/deploy/write-environment.js';
import { buildArgv } from '../../src/provisioning/executors/command.js';
import type { ProvisionedSite } from '../../src/provisioning/step.js';
import { DRAIN_MS } from '../../src/provisioning/templates/graceful-stop.js';
import { renderPlaceholderApp } from '../../src/provisioning/templates/placeholder.js';

/**
 * The deploy steps' constant scripts run by this machine's own bash/sh in a temporary directory
 * (as step-scripts.test.ts does for the others): what they change, and what they refuse.
 */
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'siteplane-deploy-scripts-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function sh(shell: 'sh' | 'bash', script: string, args: string[], input = '', cwd = dir) {
  const result = spawnSync(shell, ['-c', script, 'script', ...args], { cwd, input, encoding: 'utf8' });
  return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
}

describe('APPEND and UNPACK (artifact uploads)', () => {
  /** Uploads as the deploy step does (base64 chunks on stdin), then unpacks with the expected SHA-256. */
  function deliver(archive: Buffer, expected = createHash('sha256').update(archive).digest('hex'), chunk = 7) {
    const target = join(dir, 'rel.tar.gz');
    for (let at = 0; at < archive.length || at === 0; at += chunk) {
      const part = sh('bash', APPEND, [target, at === 0 ? 'new' : 'append'], archive.subarray(at, at + chunk).toString('base64'));
      expect(part.code, part.stderr).toBe(0);
    }
    return sh('bash', UNPACK, [join(dir, 'rel'), expected]);
  }

  it('reassembles the chunks, checks the SHA-256 and unpacks the .tar.gz into the release', () => {
    mkdirSync(join(dir, 'src/sub'), { recursive: true });
    writeFileSync(join(dir, 'src/index.html'), 'hi');
    writeFileSync(join(dir, 'src/sub/a.txt'), 'a');
    symlinkSync('sub/a.txt', join(dir, 'src/inside'));
    const archive = execFileSync('tar', ['-czf', '-', '-C', join(dir, 'src'), '.']);
    const result = deliver(archive);
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(join(dir, 'rel/sub/a.txt'), 'utf8')).toBe('a');
    expect(readFileSync(join(dir, 'rel/inside'), 'utf8')).toBe('a');
    expect(existsSync(join(dir, 'rel.tar.gz'))).toBe(false);
  });

  it('refuses an upload whose SHA-256 differs from what the control plane received', () => {
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'src/index.html'), 'hi');
    const archive = execFileSync('tar', ['-czf', '-', '-C', join(dir, 'src'), '.']);
    const result = deliver(archive, 'f'.repeat(64));
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('sha256');
    expect(existsSync(join(dir, 'rel'))).toBe(false);
  });

  it('refuses an archive with a `..` member, an absolute one or a link out of the release, and leaves no release', () => {
    mkdirSync(join(dir, 'a/b'), { recursive: true });
    writeFileSync(join(dir, 'a/evil'), 'x');
    const climbing = execFileSync('tar', ['-czPf', '-', '../evil'], { cwd: join(dir, 'a/b') });
    let result = deliver(climbing);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('climbs out of the release');
    const absolute = execFileSync('tar', ['-czPf', '-', join(dir, 'a/evil')]);
    result = deliver(absolute);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('absolute path');
    for (const target of ['/etc/passwd', '../../a/evil', 'x/../../outside']) {
      rmSync(join(dir, 'links'), { recursive: true, force: true });
      mkdirSync(join(dir, 'links/x'), { recursive: true });
      symlinkSync(target, join(dir, 'links/escape'));
      result = deliver(execFileSync('tar', ['-czf', '-', '-C', join(dir, 'links'), '.']));
      expect(result.code, target).not.toBe(0);
      expect(result.stderr).toContain('outside the release');
    }
    expect(existsSync(join(dir, 'rel'))).toBe(false);
    expect(existsSync(join(dir, 'rel.partial'))).toBe(false);
  });
});

describe('LINK_SHARED', () => {
  it('seeds shared/ from the first release that has the path, creates it otherwise, and links every release to it', () => {
    mkdirSync(join(dir, 'r1/storage/logs'), { recursive: true });
    writeFileSync(join(dir, 'r1/storage/logs/app.log'), 'first');
    const pairs = ['directory', 'storage', 'file', '.env', 'directory', 'public/uploads'];
    let result = sh('bash', LINK_SHARED, [join(dir, 'r1'), join(dir, 'shared'), ...pairs]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('seeded storage\ncreated .env\ncreated public/uploads\n');
    expect(readlinkSync(join(dir, 'r1/storage'))).toBe(join(dir, 'shared/storage'));
    expect(readFileSync(join(dir, 'shared/storage/logs/app.log'), 'utf8')).toBe('first');
    expect(statSync(join(dir, 'shared/public/uploads')).isDirectory()).toBe(true);

    // The second release brings its own storage: replaced by the link, shared/ untouched.
    mkdirSync(join(dir, 'r2/storage'), { recursive: true });
    writeFileSync(join(dir, 'r2/storage/new.log'), 'second');
    result = sh('bash', LINK_SHARED, [join(dir, 'r2'), join(dir, 'shared'), ...pairs]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe('');
    expect(lstatSync(join(dir, 'r2/storage')).isSymbolicLink()).toBe(true);
    expect(existsSync(join(dir, 'shared/storage/new.log'))).toBe(false);
    expect(readFileSync(join(dir, 'r2/storage/logs/app.log'), 'utf8')).toBe('first');
  });
});

describe('SWITCH', () => {
  it('points current at the release through a renamed temporary link and prints the previous target', () => {
    mkdirSync(join(dir, 'releases/a'), { recursive: true });
    mkdirSync(join(dir, 'releases/b'), { recursive: true });
    expect(sh('sh', SWITCH, ['releases/a']).stdout).toBe('');
    expect(sh('sh', SWITCH, ['releases/b']).stdout).toBe('releases/a\n');
    expect(readlinkSync(join(dir, 'current'))).toBe('releases/b');
    expect(existsSync(join(dir, 'current.siteplane-new'))).toBe(false);
  });
});

describe('HOOK and WRITE', () => {
  it('runs the command with bash -euo pipefail, the build variables from stdin only, and records its process group', () => {
    const vars = exportLines({ TOKEN: "it's $(secret) `x`", PLAIN: 'p' });
    const result = sh('sh', HOOK, [join(dir, 'pgid'), 'printf "%s|%s" "$TOKEN" "$PLAIN"; false; echo not-reached'], vars);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("it's $(secret) `x`|p");
    expect(readFileSync(join(dir, 'pgid'), 'utf8').trim()).toMatch(/^\d+$/);
    const pipefail = sh('sh', HOOK, [join(dir, 'pgid'), 'false | true'], '');
    expect(pipefail.code).toBe(1);
  });

  // The executor's own layers as they run under sshd (runuser keeps SSH_CLIENT): root only, as in CI.
  it.runIf(process.getuid?.() === 0)(
    "does not read the user's rc files as bash does when sshd started it (Debian's bash.bashrc under -u)",
    () => {
      const home = join(dir, 'home');
      mkdirSync(home);
      writeFileSync(join(home, '.bashrc'), 'echo read-bashrc\n');
      const hook = ['sh', '-c', HOOK, 'script', join(dir, 'pgid'), 'echo hook'];
      const [command, ...args] = buildArgv(hook, { asUser: userInfo().username, env: { HOME: home } }, true);
      const result = spawnSync(command as string, args, {
        cwd: dir,
        input: '',
        encoding: 'utf8',
        env: { ...process.env, HOME: home, SHLVL: '0', SSH_CLIENT: '10.0.0.1 50000 22', SSH2_CLIENT: '' },
      });
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout).toBe('hook\n');
      expect(result.stderr).toBe('');
    },
  );

  it('writes a private file (0600) through a temporary file', () => {
    const result = sh('sh', WRITE, [join(dir, '.siteplane.env'), '600'], "KEY='v'\n");
    expect(result.code, result.stderr).toBe(0);
    expect(statSync(join(dir, '.siteplane.env')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, '.siteplane.env'), 'utf8')).toBe("KEY='v'\n");
  });
});

describe("DOTENV_BLOCK (Laravel's .env)", () => {
  const write = (vars: Record<string, string>) =>
    sh('bash', DOTENV_BLOCK, [join(dir, '.env'), DOTENV_BEGIN, DOTENV_END], dotenvBlock(vars));

  it("appends the API's variables as a block, replaces that block at the next deploy and keeps the user's own lines", () => {
    writeFileSync(join(dir, '.env'), 'APP_NAME=mine\nAPP_KEY=by-hand\n', { mode: 0o644 });
    expect(write({ APP_KEY: 'k1', GREETING: "it's" }).code).toBe(0);
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe(
      `APP_NAME=mine\nAPP_KEY=by-hand\n${DOTENV_BEGIN}\nAPP_KEY='k1'\nGREETING=\`it's\`\n${DOTENV_END}\n`,
    );
    expect(statSync(join(dir, '.env')).mode & 0o777).toBe(0o600);
    writeFileSync(join(dir, '.env'), `${readFileSync(join(dir, '.env'), 'utf8')}ADDED=later\n`);
    expect(write({ APP_KEY: 'k2' }).code).toBe(0);
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe(
      `APP_NAME=mine\nAPP_KEY=by-hand\nADDED=later\n${DOTENV_BEGIN}\nAPP_KEY='k2'\n${DOTENV_END}\n`,
    );
    // Every variable unset: the block goes, the user's lines stay.
    expect(write({}).code).toBe(0);
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe('APP_NAME=mine\nAPP_KEY=by-hand\nADDED=later\n');
  });

  it('creates the file when there is none, and leaves no temporary file', () => {
    expect(write({ A: 'b' }).code).toBe(0);
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe(`${DOTENV_BEGIN}\nA='b'\n${DOTENV_END}\n`);
    expect(existsSync(join(dir, '.env.siteplane-tmp'))).toBe(false);
  });
});

describe("Generic Port's launcher (the user's start command)", () => {
  function launch(command: string, env: Record<string, string> = {}) {
    mkdirSync(join(dir, 'app'));
    writeFileSync(join(dir, '.siteplane.env'), renderEnvFile({ GREETING: "it's `q` $HOME", PORT: '1' }));
    writeFileSync(join(dir, 'launch.cjs'), renderCommandLauncher('./app', command));
    return spawnSync('node', [join(dir, 'launch.cjs')], { env: { ...process.env, PORT: '4100', ...env }, encoding: 'utf8' });
  }

  it('runs the command with bash in the app directory, with the release variables and PORT, quoted as the user wrote it', () => {
    const out = launch('printf "%s|%s|%s|%s" "$GREETING" "$PORT" "$(pwd)" \'$not expanded\'');
    expect(out.status, out.stderr).toBe(0);
    expect(out.stdout).toBe(`it's \`q\` $HOME|4100|${join(dir, 'app')}|$not expanded`);
  });

  it("exits with the command's status, and passes SIGTERM on to it", async () => {
    expect(launch('exit 7').status).toBe(7);
    const command = 'trap "echo got-term; exit 0" TERM; echo ready; while :; do sleep 0.05; done';
    writeFileSync(join(dir, 'launch.cjs'), renderCommandLauncher('.', command));
    const started = spawn('node', [join(dir, 'launch.cjs')], { env: { ...process.env, PORT: '4100' } });
    let out = '';
    await new Promise<void>((resolve) =>
      started.stdout.on('data', (d: Buffer) => {
        out += d;
        if (out.includes('ready')) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => started.on('exit', (code) => resolve(code)));
    started.stdout.on('data', (d: Buffer) => (out += d));
    started.kill('SIGTERM');
    expect(await exited).toBe(0);
    expect(out).toContain('got-term');
  });
});

describe('the release launcher PM2 runs', () => {
  it("loads the release's run-time variables (PORT excepted) and starts package.json's main in the app directory", () => {
    mkdirSync(join(dir, 'app'));
    writeFileSync(join(dir, 'app/package.json'), JSON.stringify({ main: 'main.js' }));
    writeFileSync(
      join(dir, 'app/main.js'),
      'console.log(JSON.stringify({ g: process.env.GREETING, port: process.env.PORT, cwd: process.cwd(), argv: process.argv.slice(2) }));',
    );
    writeFileSync(join(dir, '.siteplane.env'), renderEnvFile({ GREETING: "it's `q`", PORT: '1' }));
    writeFileSync(join(dir, 'launch.cjs'), renderLauncher('./app', { entry: null, args: ['start'] }));
    const out = execFileSync('node', [join(dir, 'launch.cjs')], { env: { ...process.env, PORT: '4000' }, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ g: "it's `q`", port: '4000', cwd: join(dir, 'app'), argv: ['start'] });
  });

  it("starts Nuxt's .output/server/index.mjs on the site's port even when the user's variables set NITRO_PORT (read before PORT)", () => {
    mkdirSync(join(dir, 'app/.output/server'), { recursive: true });
    writeFileSync(
      join(dir, 'app/.output/server/index.mjs'),
      'console.log(JSON.stringify({ nitro: process.env.NITRO_PORT, port: process.env.PORT, g: process.env.NUXT_PUBLIC_GREETING }));',
    );
    writeFileSync(join(dir, '.siteplane.env'), renderEnvFile({ NITRO_PORT: '3000', NUXT_PUBLIC_GREETING: 'hi' }));
    const nuxt = { type: 'nuxt-ssr', options: { site_type_version: 3 } } as unknown as ProvisionedSite;
    writeFileSync(join(dir, 'launch.cjs'), renderLauncher('./app', startOf(nuxt)));
    const out = execFileSync('node', [join(dir, 'launch.cjs')], { env: { ...process.env, PORT: '4000' }, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ nitro: '4000', port: '4000', g: 'hi' });
  });

  it('starts a Nuxt 2 release with `nuxt start` on 127.0.0.1 and the port in NUXT_PORT (Nuxt 2 builds no .output/)', () => {
    mkdirSync(join(dir, 'app/node_modules/nuxt/bin'), { recursive: true });
    writeFileSync(
      join(dir, 'app/node_modules/nuxt/bin/nuxt.js'),
      'console.log(JSON.stringify({ nuxtPort: process.env.NUXT_PORT, argv: process.argv.slice(2) }));',
    );
    writeFileSync(join(dir, '.siteplane.env'), renderEnvFile({ NUXT_PORT: '3000' }));
    const nuxt2 = { type: 'nuxt-ssr', options: { site_type_version: 2 } } as unknown as ProvisionedSite;
    writeFileSync(join(dir, 'launch.cjs'), renderLauncher('./app', startOf(nuxt2)));
    const out = execFileSync('node', [join(dir, 'launch.cjs')], { env: { ...process.env, PORT: '4000' }, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual({ nuxtPort: '4000', argv: ['start', '--hostname', '127.0.0.1'] });
  });
});

function freeLoopbackPort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as AddressInfo).port;
      s.close(() => resolve(p));
    });
  });
}

describe('graceful stop (the launcher and placeholder stop the way a PM2 reload needs)', () => {
  it('on SIGINT stops accepting, answers the request in progress, then exits 0', async () => {
    mkdirSync(join(dir, 'app'));
    writeFileSync(
      join(dir, 'app/server.js'),
      "require('node:http').createServer((q, r) => setTimeout(() => r.end('slow answer'), 700)).listen(Number(process.env.PORT), '127.0.0.1', () => console.log('listening'));",
    );
    writeFileSync(join(dir, 'launch.cjs'), renderLauncher('./app', { entry: null, args: [] }));
    const port = await freeLoopbackPort();
    const child = spawn('node', [join(dir, 'launch.cjs')], { env: { ...process.env, PORT: String(port) } });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await new Promise<void>((resolve) => child.stdout.on('data', () => resolve()));
    const started = Date.now();
    const answer = fetch(`http://127.0.0.1:${port}/`).then(async (r) => `${r.status} ${await r.text()}`);
    await new Promise((r) => setTimeout(r, 200));
    child.kill('SIGINT');
    await new Promise((r) => setTimeout(r, 100));
    // No longer accepting: a new connection is refused while the old request is still answered.
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
    expect(await answer).toBe('200 slow answer');
    expect(await exited).toBe(0);
    // Exited once the request was answered, not at the drain deadline.
    expect(Date.now() - started).toBeLessThan(DRAIN_MS);
  });

  it('the placeholder app drains the same way', async () => {
    writeFileSync(join(dir, 'placeholder.cjs'), renderPlaceholderApp('example.test'));
    const port = await freeLoopbackPort();
    const child = spawn('node', [join(dir, 'placeholder.cjs')], { env: { ...process.env, PORT: String(port) } });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // Once it answers, its handler is in place (it is installed before the server starts).
    for (let i = 0; i < 100; i++) {
      if (
        await fetch(`http://127.0.0.1:${port}/`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill('SIGTERM');
    expect(await exited).toBe(0);
  });
});

describe('HEALTH', () => {
  it('asks a release beside the live one again until the deadline, but fails a live one at its first definite error', async () => {
    let requests = 0;
    const server = createServer((_q, r) => {
      requests++;
      r.statusCode = 500;
      r.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    const ask = (mode: string) =>
      new Promise<{ code: number | null; stdout: string }>((resolve) => {
        const child = spawn('sh', ['-c', HEALTH, 'sh', url, '1', '1', mode]);
        let stdout = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d));
        child.on('exit', (code: number | null) => resolve({ code, stdout }));
      });
    try {
      expect(await ask('live')).toEqual({ code: 1, stdout: '500\n' });
      expect(requests).toBe(1);
      requests = 0;
      const asked = Date.now();
      expect(await ask('beside')).toEqual({ code: 1, stdout: '500\n' });
      // The whole second it was given, wherever in a second it began (a deadline, not a speed).
      expect(Date.now() - asked).toBeGreaterThanOrEqual(950);
      expect(requests).toBeGreaterThan(1);
    } finally {
      server.close();
    }
  });
});

describe('FREE_PORT', () => {
  it("picks free ports outside this machine's ephemeral range, where no outgoing connection can take them", () => {
    const [low = 0, high = 0] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    const ports = new Set<number>();
    for (let i = 0; i < 40; i++) {
      const result = sh('bash', `${FREE_PORT}\necho "$port"`, []);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      ports.add(Number(result.stdout.trim()));
    }
    expect(ports.size).toBeGreaterThan(30);
    for (const port of ports) {
      expect(Number.isInteger(port) && port >= 1024 && port <= 65535).toBe(true);
      if (low >= 21024) expect(port >= 20000 && port < low, `${port} in ${low}–${high}`).toBe(true);
      else if (high <= 64511) expect(port).toBeGreaterThan(high);
    }
  });
});

describe('BESIDE (a new release tried on a free port before it goes live)', () => {
  const beside = (app: string) => {
    writeFileSync(join(dir, 'launch.cjs'), app);
    return sh('bash', BESIDE, [dir, 'launch.cjs', '/up', '2', 'example.test', HEALTH]);
  };

  it('answers with the status the release gave, and stops the release afterwards', async () => {
    const result = beside(
      "require('node:http').createServer((q, r) => { r.statusCode = q.url === '/up' && q.headers.host === 'example.test' ? 204 : 500; r.end(); }).listen(Number(process.env.PORT), '127.0.0.1');",
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    const port = /^port (\d+)$/m.exec(result.stdout)?.[1];
    expect(result.stdout).toContain('status 204');
    await new Promise((r) => setTimeout(r, 300));
    const probe = spawnSync('curl', ['-s', '-o', '/dev/null', '-w', '%{http_code}', `http://127.0.0.1:${port}/up`], {
      encoding: 'utf8',
    });
    expect(probe.stdout).toBe('000');
  });

  it('a release that crashes fails with its own output', () => {
    const result = beside("console.error('boom: missing module'); process.exit(1);");
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('status 000');
    expect(result.stdout).toContain('boom: missing module');
  });
});

describe('GO_LIVE (a PM2 site switched, reloaded and checked through nginx in one round trip)', () => {
  /**
   * A stand-in PM2 package on PATH: `bin/pm2` records its arguments (the command line's reload);
   * with `daemon`, stand-ins of the two client modules PM2's package holds (modules/pm2-axon,
   * modules/pm2-axon-rpc) answer the process list `daemon.list` and record each call, and
   * `daemon.fail` makes reloadProcessId answer an error.
   */
  async function goLive(
    status: number | null,
    daemon?: { list: unknown[]; fail?: boolean },
    via = ['bash', '-c', GO_LIVE, 'go-live'],
    startWith?: string,
  ) {
    mkdirSync(join(dir, 'pm2/bin'), { recursive: true });
    writeFileSync(join(dir, 'pm2/bin/pm2'), '#!/bin/sh\necho "$*" >> "$PM2_CALLS"\n', { mode: 0o755 });
    mkdirSync(join(dir, 'bin'));
    symlinkSync(join(dir, 'pm2/bin/pm2'), join(dir, 'bin/pm2'));
    if (daemon) {
      mkdirSync(join(dir, 'pm2/modules/pm2-axon'), { recursive: true });
      mkdirSync(join(dir, 'pm2/modules/pm2-axon-rpc'), { recursive: true });
      writeFileSync(
        join(dir, 'pm2/modules/pm2-axon/index.js'),
        `const { EventEmitter } = require('node:events');
exports.socket = () => Object.assign(new EventEmitter(), {
  connect(path) { require('node:fs').appendFileSync(process.env.PM2_CALLS, 'connect ' + path + '\\n'); setImmediate(() => this.emit('connect')); },
});`,
      );
      writeFileSync(
        join(dir, 'pm2/modules/pm2-axon-rpc/index.js'),
        `const list = ${JSON.stringify(daemon.list)};
exports.Client = function () {
  this.call = (method, arg, cb) => {
    require('node:fs').appendFileSync(process.env.PM2_CALLS, method + ' ' + JSON.stringify(arg) + '\\n');
    if (method === 'getMonitorData') return setImmediate(() => cb(null, list));
    setImmediate(() => (${daemon.fail === true} ? cb(new Error('Reload already in progress')) : cb(null, {})));
  };
};`,
      );
    }
    mkdirSync(join(dir, 'site/releases/old'), { recursive: true });
    mkdirSync(join(dir, 'site/releases/new'));
    execFileSync('ln', ['-s', 'releases/old', join(dir, 'site/current')]);
    const server = createServer((_q, r) => {
      r.statusCode = status ?? 200;
      r.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = status === null ? '' : `http://127.0.0.1:${(server.address() as AddressInfo).port}/up`;
    try {
      return await new Promise<{ code: number | null; stdout: string; calls: string; current: string }>((resolve) => {
        const child = spawn(via[0]!, [...via.slice(1), 'releases/new', 'app', url, '2', '1', SWITCH, HEALTH, PM2_RELOAD_JS], {
          cwd: join(dir, 'site'),
          env: {
            ...process.env,
            PATH: `${join(dir, 'bin')}:${process.env.PATH}`,
            PM2_CALLS: join(dir, 'calls'),
            PM2_HOME: join(dir, 'home/.pm2'),
            ...(startWith ? { START_WITH: startWith } : {}),
          },
        });
        let stdout = '';
        child.stdout.on('data', (d: Buffer) => (stdout += d));
        child.on('exit', (code) =>
          resolve({
            code,
            stdout,
            calls: existsSync(join(dir, 'calls')) ? readFileSync(join(dir, 'calls'), 'utf8') : '',
            current: readlinkSync(join(dir, 'site/current')),
          }),
        );
      });
    } finally {
      server.close();
    }
  }

  const app = (pm_id: number, name = 'app') => ({ name, pm_id, pm2_env: { name, pm_id } });

  it("a healthy release: switched, reloaded once through the daemon's socket (each of the name's processes), live", async () => {
    const result = await goLive(200, { list: [app(0), app(1, 'other'), app(2)] });
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toMatch(/^previous releases\/old\nreloaded \d+ daemon\nstatus 200\n$/);
    expect(result.calls).toBe(
      `connect ${join(dir, 'home/.pm2/rpc.sock')}\ngetMonitorData {}\nreloadProcessId {"id":0,"env":{}}\nreloadProcessId {"id":2,"env":{}}\n`,
    );
    expect(result.current).toBe('releases/new');
  });

  it("PM2's client modules not where they were: `pm2 reload` instead", async () => {
    const result = await goLive(200);
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).toMatch(/^previous releases\/old\nreloaded \d+ cli\nstatus 200\n$/);
    expect(result.calls).toBe('reload app\n');
  });

  it('no process of that name in the daemon: nothing reloaded through it, `pm2 reload` answers', async () => {
    const result = await goLive(200, { list: [app(0, 'other')] });
    expect(result.stdout).toContain('reloaded');
    expect(result.calls).toMatch(/getMonitorData \{\}\nreload app\n$/);
  });

  it('a reload the daemon refuses fails the activation (no second try through the command line)', async () => {
    const result = await goLive(200, { list: [app(0)], fail: true });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('pm2 reload app failed:\npm2 reload app failed: Reload already in progress');
    expect(result.calls).not.toContain('reload app\n');
  });

  it('a release failing through nginx: switched back and reloaded again, exit 3', async () => {
    const result = await goLive(500, { list: [app(0)] });
    expect(result.code).toBe(3);
    expect(result.stdout).toContain('status 500\nswitched-back\n');
    expect(result.calls.match(/reloadProcessId/g)).toHaveLength(2);
    expect(result.current).toBe('releases/old');
  });

  it('a rollback (no URL): switched and reloaded, nothing asked', async () => {
    const result = await goLive(null, { list: [app(0)] });
    expect(result.code).toBe(0);
    expect(result.calls.match(/reloadProcessId/g)).toHaveLength(1);
    expect(result.current).toBe('releases/new');
  });

  it('ACTIVATE: the try beside failing stops everything before the switch (exit 4, its lines marked)', async () => {
    writeFileSync(join(dir, 'crash.cjs'), "console.error('boom'); process.exit(1);");
    const result = await goLive(200, { list: [app(0)] }, [
      'bash',
      '-c',
      ACTIVATE,
      'activate',
      BESIDE,
      GO_LIVE,
      dir,
      'crash.cjs',
      '/up',
      '1',
      'example.test',
    ]);
    expect(result.code, result.stdout).toBe(4);
    // Every line BESIDE printed is marked (its crash output too, when the release printed it within
    // the check's time: on a loaded machine Node may not have started by then).
    expect(result.stdout).toMatch(/^beside port \d+\nbeside status 000\n(beside boom\n)?$/);
    expect(result.calls).toBe('');
    expect(result.current).toBe('releases/old');
  });

  it('ACTIVATE: with an empty release directory (a rollback) GO_LIVE alone', async () => {
    const result = await goLive(200, { list: [app(0)] }, [
      'bash',
      '-c',
      ACTIVATE,
      'activate',
      BESIDE,
      GO_LIVE,
      '',
      'x',
      '',
      '0',
      'x',
    ]);
    expect(result.code, result.stdout).toBe(0);
    expect(result.stdout).not.toContain('beside');
    expect(result.current).toBe('releases/new');
  });

  it('Generic Port (START_WITH): startOrReload of its ecosystem file, which starts the process the first time', async () => {
    const result = await goLive(500, undefined, undefined, '/home/u/site/ecosystem.config.cjs');
    expect(result.code).toBe(3);
    expect(result.calls).toBe(
      'startOrReload /home/u/site/ecosystem.config.cjs\nstartOrReload /home/u/site/ecosystem.config.cjs\n',
    );
    expect(result.current).toBe('releases/old');
  });
});

describe('MIRROR and EXPORT (the fetch: two round trips)', () => {
  function repository(): string {
    const work = join(dir, 'work');
    mkdirSync(work);
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', work, '-c', 'user.name=Ann', '-c', 'user.email=ann@example.test', ...args], {
        encoding: 'utf8',
      });
    git('init', '-q', '-b', 'main');
    writeFileSync(join(work, 'index.html'), 'v1');
    git('add', '-A');
    git('commit', '-q', '-m', 'first');
    return work;
  }
  const mirror = (url: string, revision: string, live = '') => {
    mkdirSync(join(dir, 'site'), { recursive: true });
    if (live !== '') execFileSync('ln', ['-sfn', live, join(dir, 'site/current')]);
    return sh('bash', MIRROR, [
      join(dir, 'site/repo'),
      url,
      'none',
      join(dir, 'key'),
      join(dir, 'site/current'),
      'releases/r2',
      revision,
    ]);
  };

  it('clones, then answers the commit of the branch; a second run fetches', () => {
    const url = repository();
    const first = mirror(url, 'refs/heads/main^{commit}');
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/^cloned\ncommit [0-9a-f]{40}\0Ann <ann@example\.test>\0first\n$/);
    expect(mirror(url, 'refs/heads/main^{commit}').stdout).toMatch(/^fetched\ncommit /);
    const sha = /commit ([0-9a-f]{40})/.exec(first.stdout)![1]!;
    const exported = sh('bash', EXPORT, [join(dir, 'site/repo'), sha, join(dir, 'site/releases/r2')]);
    expect(exported.code, exported.stderr).toBe(0);
    expect(readFileSync(join(dir, 'site/releases/r2/index.html'), 'utf8')).toBe('v1');
    expect(sh('bash', EXPORT, [join(dir, 'site/repo'), sha, join(dir, 'site/releases/r2')]).stdout).toBe('exists\n');
  });

  it('refuses to fetch into the live release (exit 3), and a revision the repository lacks exits 4', () => {
    const url = repository();
    expect(mirror(url, 'refs/heads/main^{commit}', 'releases/r2').code).toBe(3);
    expect(existsSync(join(dir, 'site/repo'))).toBe(false);
    expect(mirror(url, 'refs/heads/nope^{commit}', 'releases/r1').code).toBe(4);
  });
});

describe('WRITE_ENVIRONMENT and LIST (one round trip each)', () => {
  it('writes the variables from stdin (0600) and the launcher from its argument (0644)', () => {
    const result = sh('sh', WRITE_ENVIRONMENT, [join(dir, '.env'), join(dir, 'launch.cjs'), "// it's the launcher\n"], 'A=1\n');
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(join(dir, '.env'), 'utf8')).toBe('A=1\n');
    expect(statSync(join(dir, '.env')).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, 'launch.cjs'), 'utf8')).toBe("// it's the launcher\n");
    expect(statSync(join(dir, 'launch.cjs')).mode & 0o777).toBe(0o644);
    expect(sh('sh', WRITE_ENVIRONMENT, [join(dir, 'only.env')], 'B=2\n').code).toBe(0);
    expect(readFileSync(join(dir, 'only.env'), 'utf8')).toBe('B=2\n');
  });

  it('lists where current points, then the releases', () => {
    mkdirSync(join(dir, 'releases/a'), { recursive: true });
    mkdirSync(join(dir, 'releases/b'));
    expect(sh('sh', LIST, [join(dir, 'current'), join(dir, 'releases')]).stdout).toBe('\na\nb\n');
    execFileSync('ln', ['-s', 'releases/b', join(dir, 'current')]);
    expect(sh('sh', LIST, [join(dir, 'current'), join(dir, 'releases')]).stdout).toBe('releases/b\na\nb\n');
  });
});

describe('CANCEL', () => {
  it('stops a running hook and everything it started (its process group), with the shell Debian runs scripts with', async () => {
    const pgid = join(dir, 'pgid');
    // Its own session, as under `timeout` on the server: the cancel must not reach this test's group.
    const hook = spawn('sh', ['-c', HOOK, 'sh', pgid, 'sleep 47 | cat'], { detached: true, stdio: ['pipe', 'ignore', 'ignore'] });
    hook.stdin.end('');
    const exited = new Promise<number | null>((resolve) =>
      hook.on('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))),
    );
    for (let i = 0; i < 50 && !existsSync(pgid); i++) await new Promise((r) => setTimeout(r, 50));
    await new Promise((r) => setTimeout(r, 200));
    const cancel = sh('sh', CANCEL, [pgid]);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(await exited).not.toBe(0);
    const left = spawnSync('pgrep', ['-f', 'sleep 47'], { encoding: 'utf8' });
    expect(left.stdout.trim()).toBe('');
  });
});

describe('STAND_IN and STOP_STAND_IN (Generic Port: the next release answers while the process restarts in place)', () => {
  const app =
    "require('node:http').createServer((q, r) => { r.statusCode = q.url === '/up' && q.headers.host === 'example.test' ? 200 : 500; r.end(String(process.env.PORT)); }).listen(Number(process.env.PORT), '127.0.0.1');";
  const pidFile = () => join(dir, '.siteplane-stand-in.pid');
  const standIn = (mode = 'beside') =>
    sh('bash', STAND_IN, [dir, 'launch.cjs', '/up', '3', 'example.test', HEALTH, mode, pidFile(), '60']);
  const stop = (port: string) => sh('bash', STOP_STAND_IN, [port, pidFile(), 'launch.cjs']);
  const ask = (port: string) =>
    spawnSync(
      'curl',
      ['-s', '-o', '/dev/null', '-w', '%{http_code}', '-H', 'Host: example.test', `http://127.0.0.1:${port}/up`],
      {
        encoding: 'utf8',
      },
    ).stdout;
  const alive = (pid: string) => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z ');
  const gone = async (pid: string) => {
    for (let i = 0; i < 50 && alive(pid); i += 1) await new Promise((r) => setTimeout(r, 100));
    return !alive(pid);
  };

  it('keeps a release that answered running, in a session of its own under timeout, until STOP_STAND_IN', async () => {
    writeFileSync(join(dir, 'launch.cjs'), app);
    const started = standIn();
    expect(started.code, started.stdout + started.stderr).toBe(0);
    const port = /^port (\d+)$/m.exec(started.stdout)?.[1] ?? '';
    const pid = /^pid (\d+)$/m.exec(started.stdout)?.[1] ?? '';
    expect(started.stdout).toContain('status 200');
    expect(readFileSync(pidFile(), 'utf8').trim()).toBe(pid);
    // Still answering after the script ended (the deploy's next round trips happen meanwhile).
    expect(ask(port)).toBe('200');
    expect(readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, 6)).toEqual([
      'timeout',
      '-k',
      '10',
      '60',
      'node',
      '--',
    ]);
    const stopped = stop(port);
    expect(stopped.stdout).toContain('stopped');
    expect(await gone(pid)).toBe(true);
    expect(existsSync(pidFile())).toBe(false);
    expect(ask(port)).toBe('000');
  });

  it('a stand-in an interrupted deploy left is stopped by the next one; a pid file naming another process is not obeyed', async () => {
    writeFileSync(join(dir, 'launch.cjs'), app);
    const first = standIn();
    const firstPid = /^pid (\d+)$/m.exec(first.stdout)?.[1] ?? '';
    const second = standIn();
    expect(second.stdout).toContain(`stopped an earlier stand-in (${firstPid})`);
    expect(await gone(firstPid)).toBe(true);
    const secondPid = /^pid (\d+)$/m.exec(second.stdout)?.[1] ?? '';
    // A pid file the site user rewrote to name some other process of theirs: left alone.
    const other = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
    writeFileSync(pidFile(), `${other.pid}\n`);
    expect(stop('1').stdout).toContain('no stand-in');
    expect(alive(String(other.pid))).toBe(true);
    other.kill();
    writeFileSync(pidFile(), `${secondPid}\n`);
    expect(stop('1').stdout).toContain('stopped');
    expect(await gone(secondPid)).toBe(true);
  });

  it('a release that does not answer is stopped and its output shown (exit 4, no pid file); mode any takes a 500', () => {
    writeFileSync(join(dir, 'launch.cjs'), "console.error('boom: missing module'); process.exit(1);");
    const failed = standIn();
    expect(failed.code).toBe(4);
    expect(failed.stdout).toContain('boom: missing module');
    expect(existsSync(pidFile())).toBe(false);
    writeFileSync(join(dir, 'launch.cjs'), app.replace("'/up'", "'/elsewhere'"));
    expect(standIn().code).toBe(4);
    const any = standIn('any');
    expect(any.code, any.stdout).toBe(0);
    expect(any.stdout).toContain('status 500');
    stop(/^port (\d+)$/m.exec(any.stdout)?.[1] ?? '1');
  });
});

describe("the Node types' npm ci reusing the live release's node_modules", () => {
  const releases = () => join(dir, 'site', 'releases');
  /** A release with its package.json and (unless null) package-lock.json. */
  function release(name: string, lock: string | null, pkg: Record<string, unknown>) {
    const at = join(releases(), name);
    mkdirSync(at, { recursive: true });
    writeFileSync(join(at, 'package.json'), JSON.stringify(pkg));
    if (lock !== null) writeFileSync(join(at, 'package-lock.json'), lock);
    return at;
  }
  /** npm stands in as a script that records its calls; node is this machine's. */
  function npmCi(at: string, greeting: string) {
    const bin = join(dir, 'bin');
    mkdirSync(bin, { recursive: true });
    writeFileSync(
      join(bin, 'npm'),
      `#!/bin/bash
echo "npm $*" >> "$NPM_LOG"
case "$1" in
  -v) echo 10.9.9 ;;
  ci) rm -rf node_modules; grep -q left-pad package.json || exit 0
    mkdir -p node_modules/left-pad node_modules/.cache; echo "installed in $PWD" > node_modules/left-pad/index.js; echo c > node_modules/.cache/x ;;
esac
`,
      { mode: 0o755 },
    );
    const result = spawnSync('bash', ['-euo', 'pipefail', '-c', reusingNpmCi(['GREETING'])], {
      cwd: at,
      encoding: 'utf8',
      env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, NPM_LOG: join(dir, 'npm.log'), GREETING: greeting },
    });
    const calls = existsSync(join(dir, 'npm.log')) ? readFileSync(join(dir, 'npm.log'), 'utf8').trim().split('\n') : [];
    rmSync(join(dir, 'npm.log'), { force: true });
    return { code: result.status, stdout: result.stdout, stderr: result.stderr, calls };
  }
  const live = (name: string) => {
    rmSync(join(dir, 'site', 'current'), { force: true });
    symlinkSync(`releases/${name}`, join(dir, 'site', 'current'));
  };
  const pkg = {
    name: 'app',
    version: '1.0.0',
    dependencies: { 'left-pad': '1.3.0' },
    scripts: { postinstall: 'a', prepare: 'b' },
  };

  it('runs npm ci for a first release and stamps what it installed (0600)', () => {
    const r1 = release('r1', 'lock-1', pkg);
    const first = npmCi(r1, 'hello');
    expect(first.code, first.stderr).toBe(0);
    expect(first.calls).toEqual(['npm -v', 'npm ci']);
    const stamp = readFileSync(join(r1, DEPENDENCY_STAMP), 'utf8');
    expect(stamp).toMatch(/^lock=[0-9a-f]{64} package=[0-9a-f]{64} node=v\d+\.\d+\.\d+ env=[0-9a-f]{64} npm=10\.9\.9\n$/);
    expect(stamp).not.toContain('hello');
    expect(statSync(join(r1, DEPENDENCY_STAMP)).mode & 0o777).toBe(0o600);
  });

  it("copies the live release's node_modules when lock, dependencies and build variables match, and runs the install scripts", () => {
    const r1 = release('r1', 'lock-1', pkg);
    expect(npmCi(r1, 'hello').code).toBe(0);
    live('r1');
    // Another version and build script: not what npm installs from.
    const r2 = release('r2', 'lock-1', { ...pkg, version: '2.0.0', scripts: { ...pkg.scripts, build: 'c' } });
    const second = npmCi(r2, 'hello');
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain('node_modules copied from r1');
    expect(second.calls).toEqual(['npm -v', 'npm run --ignore-scripts postinstall', 'npm run --ignore-scripts prepare']);
    expect(readFileSync(join(r2, 'node_modules/left-pad/index.js'), 'utf8')).toBe(`installed in ${r1}\n`);
    // A copy, not links: what the new release writes there leaves the old one as it was; no build cache carried over.
    expect(statSync(join(r2, 'node_modules/left-pad/index.js')).ino).not.toBe(
      statSync(join(r1, 'node_modules/left-pad/index.js')).ino,
    );
    expect(existsSync(join(r2, 'node_modules/.cache'))).toBe(false);
    expect(existsSync(join(r1, 'node_modules/.cache/x'))).toBe(true);
    expect(existsSync(join(r2, '.siteplane-node-modules'))).toBe(false);
    expect(readFileSync(join(r2, DEPENDENCY_STAMP), 'utf8')).toBe(readFileSync(join(r1, DEPENDENCY_STAMP), 'utf8'));
  });

  it('runs npm ci when the lock, a dependency or a build variable changed, or there is no lock or live release', () => {
    const r1 = release('r1', 'lock-1', pkg);
    expect(npmCi(r1, 'hello').code).toBe(0);
    live('r1');
    const cases: [string, string | null, Record<string, unknown>, string][] = [
      ['lock', 'lock-2', pkg, 'hello'],
      ['dependency', 'lock-1', { ...pkg, devDependencies: { typescript: '5.0.0' } }, 'hello'],
      ['variable', 'lock-1', pkg, 'bonjour'],
      ['no-lock', null, pkg, 'hello'],
    ];
    for (const [name, lock, contents, greeting] of cases) {
      const result = npmCi(release(name, lock, contents), greeting);
      expect(result.code, `${name}: ${result.stderr}`).toBe(0);
      expect(result.calls.at(-1), name).toBe('npm ci');
      expect(result.stdout, name).not.toContain('copied');
    }
    expect(existsSync(join(releases(), 'no-lock', DEPENDENCY_STAMP))).toBe(false);
    // No dependencies: npm ci makes no node_modules, and the hook no stamp (it does not fail for want of one).
    const bare = npmCi(release('bare', 'lock-0', { name: 'app', version: '1.0.0' }), 'hello');
    expect(bare.code, bare.stderr).toBe(0);
    expect(bare.calls.at(-1)).toBe('npm ci');
    expect(existsSync(join(releases(), 'bare', 'node_modules'))).toBe(false);
    // The live release itself (a deploy of the same release name never happens; nothing to copy from).
    rmSync(join(dir, 'site', 'current'));
    expect(npmCi(release('r5', 'lock-1', pkg), 'hello').calls.at(-1)).toBe('npm ci');
  });

  it('a user who changed the hook gets their command; PHP sites keep theirs', () => {
    const site = { type: 'nodejs-ssr' } as ProvisionedSite;
    const plan = { environment: { build: { GREETING: 'x' }, runtime: {} } } as unknown as DeployPlan;
    const hook = (command: string) => ({ name: 'npm ci', command, stage: 'after-fetch' as const, enabled: true });
    expect(hookCommand(site, plan, hook('npm ci'))).toBe(reusingNpmCi(['GREETING']));
    expect(hookCommand(site, plan, hook('npm ci --omit=dev'))).toBe('npm ci --omit=dev');
    expect(hookCommand({ type: 'php' } as ProvisionedSite, plan, hook('npm ci'))).toBe('npm ci');
    // Names only: no value of a build variable is in the command line.
    expect(reusingNpmCi(['GREETING'])).not.toContain("'x'");
  });
});
