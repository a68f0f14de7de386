import { describe, expect, it } from 'vitest';
import { ACTIVATE } from '../../src/provisioning/deploy/activate-process.js';
import { DeployCancelled } from '../../src/provisioning/deploy/cancelled.js';
import { deployToolsFor } from '../../src/provisioning/deploy/ensure-deploy-tools.js';
import { MIRROR } from '../../src/provisioning/deploy/fetch-git.js';
import { HEALTH } from '../../src/provisioning/deploy/health-check.js';
import { deploySteps } from '../../src/provisioning/deploy/index.js';
import { renderManifest } from '../../src/provisioning/deploy/manifest.js';
import type { DeployPlan, DeployProgress } from '../../src/provisioning/deploy/plan.js';
import { releasesToRemove } from '../../src/provisioning/deploy/prune.js';
import { STAND_IN, STOP_STAND_IN } from '../../src/provisioning/deploy/stand-in.js';
import { SWITCH } from '../../src/provisioning/deploy/switch-current.js';
import { CANCEL, HOOK, UserCommandFailed } from '../../src/provisioning/deploy/user-command.js';
import type { CommandResult, Executor, RunOptions } from '../../src/provisioning/executor.js';
import { DryRunExecutor } from '../../src/provisioning/executors/dry-run.js';
import type { ProvisionedSite } from '../../src/provisioning/step.js';
import { renderSiteVhost } from '../../src/provisioning/steps/ensure-nginx-vhost.js';
import { siteLayout } from '../../src/provisioning/steps/site-layout.js';
import { makeContext, runSteps } from './support/context.js';
import { siteOf } from './support/sites.js';

/**
 * Issue 11 items 4-6, the server side: the deploy steps' lists and the commands they give a dry-run
 * executor (what the server would run, in order, as whom), secrets kept out of every argv.
 */
const TOKEN = 'ghp_SECRET_token_value';
const KEY = '-----BEGIN OPENSSH PRIVATE KEY-----\nAAAAsecretkeymaterial\n-----END OPENSSH PRIVATE KEY-----';
const BUILD_SECRET = 'build-secret-value';
const RUNTIME_SECRET = 'runtime-secret-value';

function plan(extra: Partial<DeployPlan> = {}): DeployPlan {
  return {
    deploymentUuid: 'd-1',
    release: '20261126T121314Z-1a2b3c4',
    source: {
      kind: 'git',
      url: 'https://git.example.com/acme/app.git',
      branch: 'main',
      commit: null,
      appFolder: null,
      credentials: { httpsUser: 'x-access-token', httpsToken: TOKEN },
    },
    buildCommand: 'npm ci && npm run build',
    artifactPath: null,
    hooks: [
      { name: 'prepare', command: 'echo prepare', stage: 'after-fetch', enabled: true },
      { name: 'off', command: 'false', stage: 'after-fetch', enabled: false },
      { name: 'migrate', command: 'php artisan migrate --force', stage: 'before-activate', enabled: true },
      { name: 'warm', command: 'curl -s localhost', stage: 'after-activate', enabled: true },
    ],
    sharedPaths: [
      { path: '.env', kind: 'file' },
      { path: 'storage', kind: 'directory' },
    ],
    environment: { build: { NPM_TOKEN: BUILD_SECRET }, runtime: { APP_KEY: RUNTIME_SECRET } },
    keepReleases: 3,
    healthCheck: { path: '/health', timeoutSeconds: 20 },
    startCommand: null,
    ...extra,
  };
}

function progress(signal = new AbortController().signal): DeployProgress & { commits: unknown[] } {
  const commits: unknown[] = [];
  return { commits, cancelled: signal, commitResolved: async (c) => void commits.push(c) };
}

function dryRun(answers: (exec: DryRunExecutor) => void = () => undefined) {
  const lines: string[] = [];
  const exec = new DryRunExecutor({ onCommand: (line) => lines.push(line) });
  answers(exec);
  return { exec, lines };
}

const isScript = (script: string) => (argv: readonly string[]) => argv[2] === script;
const isVhostRead = (site: ProvisionedSite) => (argv: readonly string[]) =>
  argv[0] === 'cat' && argv[2] === siteLayout(site).vhost;

describe('the deploy step list (issue 11 item 4)', () => {
  it('runs fetch, shared, environment, hooks by stage, build, manifest, activation, then prune; disabled hooks are left out', () => {
    const names = deploySteps.deploy(siteOf('php'), plan(), progress()).map((s) => s.name);
    expect(names).toEqual([
      'ensure git',
      'fetch',
      'link shared files',
      'write environment',
      'hook: prepare',
      'build',
      'hook: migrate',
      'write release manifest',
      'activate',
      'hook: warm',
      'prune releases',
    ]);
  });

  it('unpacks an artifact instead of fetching, and has no build step without a build command', () => {
    const names = deploySteps
      .deploy(
        siteOf('static-html'),
        plan({
          source: { kind: 'artifact', file: '/nonexistent/a.tar.gz', sha256: 'ab', bytes: 1 },
          buildCommand: null,
          hooks: [],
        }),
        progress(),
      )
      .map((s) => s.name);
    expect(names).toEqual([
      'ensure git',
      'unpack artifact',
      'link shared files',
      'write environment',
      'write release manifest',
      'activate',
      'prune releases',
    ]);
  });

  it('rolls back without building: check the release, activate', () => {
    expect(deploySteps.rollback(siteOf('nodejs-ssr'), { deploymentUuid: 'r', release: 'r1' }).map((s) => s.name)).toEqual([
      'check release',
      'activate',
    ]);
  });
});

describe('commands on the server', () => {
  it('a full PHP deploy: everything in the site tree as the site user; no secret in any argv; current switched last', async () => {
    const { exec, lines } = dryRun((e) =>
      e
        .answer(isScript(MIRROR), { stdout: `fetched\ncommit ${'a'.repeat(40)}\0Ann <ann@example.com>\0Fix things\n` })
        .answer(isScript(HEALTH), { stdout: '200\n' })
        .answer(/dpkg-query/, { stdout: 'git\tii \ncurl\tii \n' }),
    );
    const site = siteOf('php', { user: 'alice', domain: 'shop.example.com' });
    const p = progress();
    await runSteps(makeContext(exec, site), deploySteps.deploy(site, plan(), p));
    const all = lines.join('\n');
    for (const secret of [TOKEN, 'AAAAsecretkeymaterial', BUILD_SECRET, RUNTIME_SECRET]) expect(all).not.toContain(secret);
    expect(p.commits).toEqual([{ sha: 'a'.repeat(40), author: 'Ann <ann@example.com>', message: 'Fix things' }]);

    const mirror = lines.find((l) => l.includes('/home/alice/shop.example.com/repo') && l.includes('(detached)'));
    expect(mirror).toContain('https://git.example.com/acme/app.git');
    expect(mirror).toMatch(/"asUser":"alice"/);
    expect(mirror).toMatch(/"stdin":"<redacted \d+ bytes>"/);
    expect(mirror).toContain('"GIT_ALLOW_PROTOCOL":"https:http:ssh:git"');

    const build = lines.find((l) => l.includes('npm ci && npm run build'));
    expect(build).toContain('(detached)');
    expect(build).toContain('"cwd":"/home/alice/shop.example.com/releases/20261126T121314Z-1a2b3c4"');
    expect(build).toMatch(/"asUser":"alice"/);
    // The user's command is its own argument after the constant wrapper, never spliced into it.
    expect(HOOK).toContain('bash -euo pipefail -c "$2" bash </dev/null');

    const order = (needle: string) => lines.findIndex((l) => l.includes(needle));
    expect(order('echo prepare')).toBeLessThan(order('npm ci && npm run build'));
    expect(order('npm ci && npm run build')).toBeLessThan(order('php artisan migrate'));
    expect(order('php artisan migrate')).toBeLessThan(order('.siteplane-release.json'));
    const switchAt = lines.findIndex((l) => l.includes('current.siteplane-new'));
    expect(order('.siteplane-release.json')).toBeLessThan(switchAt);
    expect(switchAt).toBeLessThan(order('curl -s localhost'));
    // The release asked through its FPM pool before the switch, as nginx's user (check-before-switch.ts)…
    const askedBefore = order('IO::Socket::UNIX');
    expect(order('.siteplane-release.json')).toBeLessThan(askedBefore);
    expect(askedBefore).toBeLessThan(switchAt);
    expect(lines[askedBefore]).toContain('/home/alice/shop.example.com/releases/20261126T121314Z-1a2b3c4');
    expect(lines[askedBefore]).toContain('/run/php/php8.2-fpm-alice.sock');
    // …FPM reloaded after the switch (USR2 or start), then the health check through nginx.
    expect(lines.slice(switchAt).join('\n')).toMatch(/php8\.2-fpm[\s\S]*--resolve shop\.example\.com:80:127\.0\.0\.1/);
    // No command in the site tree runs as root: the site user's, or nginx's for that check.
    for (const line of lines.filter((l) => l.includes('/home/alice/shop.example.com') && !l.includes('chmod o+x'))) {
      expect(line, line).toMatch(line.includes('IO::Socket::UNIX') ? /"asUser":"www-data"/ : /"asUser":"alice"/);
    }
    // Composer for a PHP site, from the distribution, when dpkg does not list it; a plain PHP site has no Laravel .env block.
    expect(all).toMatch(/apt-get install .*\bcomposer\b/);
    expect(lines.some((l) => l.includes(' dotenv-block '))).toBe(false);
  });

  it('Laravel: the run-time variables go into the shared .env too, as the site user; static sites need no Composer', async () => {
    const { exec, lines } = dryRun((e) =>
      e
        .answer(isScript(MIRROR), { stdout: `fetched\ncommit ${'a'.repeat(40)}\0Ann <ann@example.com>\0Fix things\n` })
        .answer(isScript(HEALTH), { stdout: '200\n' })
        .answer(/dpkg-query/, { stdout: 'git\tii \ncurl\tii \ncomposer\tii \n' }),
    );
    const site = siteOf('laravel', { user: 'alice', domain: 'shop.example.com' });
    await runSteps(makeContext(exec, site), deploySteps.deploy(site, plan(), progress()));
    const block = lines.find((l) => l.includes(' dotenv-block '));
    expect(block).toContain('/home/alice/shop.example.com/shared/.env');
    expect(block).toMatch(/"asUser":"alice"/);
    expect(lines.join('\n')).not.toContain(RUNTIME_SECRET);
    expect(lines.join('\n')).not.toMatch(/apt-get install/);
    expect(deployToolsFor({ type: 'static-html' })).toEqual(['git', 'curl']);
    expect(deployToolsFor({ type: 'laravel' })).toEqual(['git', 'curl', 'composer']);
  });

  it('an ssh key travels on stdin into a 0600 file removed on exit, never in argv', async () => {
    const { exec, lines } = dryRun((e) => e.answer(isScript(MIRROR), { stdout: `cloned\ncommit ${'b'.repeat(40)}\0A\0m\n` }));
    const site = siteOf('static-html');
    const source = {
      kind: 'git' as const,
      url: 'git@git.example.com:acme/app.git',
      branch: 'main',
      commit: null,
      appFolder: 'web',
      credentials: { sshPrivateKey: KEY },
    };
    const steps = deploySteps.deploy(site, plan({ source }), progress());
    await runSteps(makeContext(exec, site), steps.slice(0, 2));
    expect(lines.join('\n')).not.toContain('secretkeymaterial');
    const mirror = lines.find((l) => l.includes('/repo') && l.includes('(detached)')) ?? '';
    expect(mirror).toMatch(/ ssh \/home\/alice\/\.siteplane-deploy-[0-9a-f-]+\.key /);
    expect(lines.some((l) => l.includes(`${'b'.repeat(40)}:web`))).toBe(true);
  });

  it('refuses hostile sources before running anything', async () => {
    for (const source of [
      { url: 'ext::sh -c touch% /tmp/pwned', branch: 'main', commit: null },
      { url: 'file:///etc', branch: 'main', commit: null },
      { url: '--upload-pack=touch /tmp/x', branch: 'main', commit: null },
      { url: 'https://git.example.com/a.git', branch: '--output=/tmp/x', commit: null },
      { url: 'https://git.example.com/a.git', branch: 'main', commit: 'HEAD; rm -rf /' },
    ]) {
      const { exec, lines } = dryRun();
      const site = siteOf('static-html');
      const fetch = deploySteps.deploy(
        site,
        plan({ source: { kind: 'git', appFolder: null, credentials: null, ...source } }),
        progress(),
      )[1]!;
      await expect(fetch.run(makeContext(exec, site))).rejects.toThrow();
      expect(lines.filter((l) => l.includes('(detached)') || l.includes(' log '))).toEqual([]);
    }
    const { exec } = dryRun();
    await expect(
      deploySteps
        .deploy(siteOf('static-html'), plan({ release: '../../etc' }), progress())[1]!
        .run(makeContext(exec, siteOf('static-html'))),
    ).rejects.toThrow(/release name/);
    await expect(
      deploySteps
        .deploy(siteOf('static-html'), plan({ sharedPaths: [{ path: '../x', kind: 'file' }] }), progress())[2]!
        .run(makeContext(exec, siteOf('static-html'))),
    ).rejects.toThrow(/shared path/);
  });
});

describe('activation (issue 11 item 5)', () => {
  it('static/PHP: a failing health check switches back to the previous release and fails the step', async () => {
    const { exec, lines } = dryRun((e) =>
      e.answer(isScript(SWITCH), { stdout: 'releases/old\n' }).answer(isScript(HEALTH), { code: 1, stdout: '500\n' }),
    );
    const site = siteOf('static-html');
    const activate = deploySteps.deploy(site, plan({ hooks: [] }), progress()).find((s) => s.name === 'activate')!;
    await expect(activate.run(makeContext(exec, site))).rejects.toThrow(
      /health check failed: \/health answered 500 within 20 s; switched back to releases\/old/,
    );
    const switches = lines.filter((l) => l.includes('current.siteplane-new'));
    expect(switches).toHaveLength(2);
    expect(switches[0]).toContain('releases/20261126T121314Z-1a2b3c4');
    expect(switches[1]).toContain('releases/old');
  });

  it('static builds: the directory nginx serves must be in the new release (as the site user) before current switches', async () => {
    const site = siteOf('nuxt-static', { options: { site_type_version: 3 } });
    const activate = (p: DeployPlan) => deploySteps.deploy(site, p, progress()).find((s) => s.name === 'activate')!;
    const missing = dryRun((e) => e.answer((argv) => argv[0] === 'test', { code: 1 }));
    await expect(activate(plan({ hooks: [] })).run(makeContext(missing.exec, site))).rejects.toThrow(
      /the build left no \.output\/public\/ in release 20261126T121314Z-1a2b3c4: .*the live release keeps serving/,
    );
    const check = missing.lines.find((l) => l.startsWith('test -d'));
    expect(check).toContain('/home/alice/nuxt-static.example.com/releases/20261126T121314Z-1a2b3c4/.output/public');
    expect(check).toMatch(/"asUser":"alice"/);
    expect(missing.lines.filter((l) => l.includes('current.siteplane-new'))).toEqual([]);

    const present = dryRun((e) => e.answer(isScript(HEALTH), { stdout: '200\n' }));
    await activate(plan({ hooks: [] })).run(makeContext(present.exec, site));
    expect(present.lines.findIndex((l) => l.startsWith('test -d'))).toBeLessThan(
      present.lines.findIndex((l) => l.includes('current.siteplane-new')),
    );

    // An artifactPath in the deploy settings that nginx does not serve: refused before anything runs.
    const other = dryRun();
    const vite = siteOf('nodejs-static');
    const viteActivate = deploySteps
      .deploy(vite, plan({ hooks: [], artifactPath: 'dist' }), progress())
      .find((s) => s.name === 'activate')!;
    await expect(viteActivate.run(makeContext(other.exec, vite))).rejects.toThrow(
      /artifactPath "dist" in the deploy settings is not what nginx serves for this site \("build\/out"/,
    );
    expect(other.lines).toEqual([]);
  });

  it('PM2: the new release answers beside the live one first; failing there, nothing switches or reloads', async () => {
    const site = siteOf('nodejs-ssr', { domain: 'app.example.com' });
    const { exec, lines: all } = dryRun((e) => {
      e.answer(isVhostRead(site), { stdout: renderSiteVhost(site) });
      e.answer(isScript(ACTIVATE), {
        code: 4,
        stdout: 'beside port 40123\nbeside status 000\nbeside Error: Cannot find module pg\n',
      });
    });
    const activate = deploySteps.deploy(site, plan({ hooks: [] }), progress()).find((s) => s.name === 'activate')!;
    const ctx = makeContext(exec, site);
    await expect(activate.run(ctx)).rejects.toThrow(
      /with 000 within 20 s beside the live release \(port 40123\), which keeps serving/,
    );
    // The vhost read first (up to date: nothing written), then the one round trip of the activation.
    expect(all[0]).toMatch(/^cat .*\/etc\/nginx\/sites-available\/app\.example\.com\.conf/);
    const lines = all.slice(1);
    expect(ctx.logs).toContain('  Error: Cannot find module pg');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(
      '/home/alice/app.example.com/releases/20261126T121314Z-1a2b3c4 siteplane-placeholder.cjs /health 20 app.example.com',
    );
    expect(lines[0]).toMatch(/"asUser":"alice"/);
    expect(ctx.logs.some((l) => l.startsWith('current now points'))).toBe(false);
    expect(ctx.logs.some((l) => l.startsWith('reloaded'))).toBe(false);
  });

  it('PM2: healthy beside → switch, graceful reload of the site process and the check through nginx, in one round trip', async () => {
    const site = siteOf('nodejs-ssr', { domain: 'app.example.com' });
    const { exec, lines: all } = dryRun((e) => {
      e.answer(isVhostRead(site), { stdout: renderSiteVhost(site) });
      e.answer(isScript(ACTIVATE), {
        stdout: 'beside port 40123\nbeside status 200\nprevious releases/old\nreloaded 812 daemon\nstatus 200\n',
      });
    });
    const activate = deploySteps.deploy(site, plan({ hooks: [] }), progress()).find((s) => s.name === 'activate')!;
    const ctx = makeContext(exec, site);
    await activate.run(ctx);
    expect(all[0]).toMatch(/^cat .*\/etc\/nginx\/sites-available\/app\.example\.com\.conf/);
    const lines = all.slice(1);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('setsid node');
    expect(lines[0]).toContain('releases/20261126T121314Z-1a2b3c4 app.example.com http://app.example.com/health 20 10');
    expect(lines[0]).toContain('--resolve app.example.com:80:127.0.0.1');
    expect(lines[0]).toMatch(/"asUser":"alice"/);
    expect(ctx.logs).toContain(
      'health check: 20261126T121314Z-1a2b3c4 answered /health with 200 beside the live release (port 40123)',
    );
    expect(ctx.logs).toContain('current now points to releases/20261126T121314Z-1a2b3c4 (was releases/old)');
    expect(ctx.logs.some((l) => /^reloaded PM2 process app\.example\.com in 812 ms .*through the daemon's socket/.test(l))).toBe(
      true,
    );
    expect(ctx.logs).toContain('health check: /health answered 200 through nginx');
    // The saved process list names `current`: whichever release is live, it need not be saved again.
    expect(lines.some((l) => l.includes('pm2 save'))).toBe(false);
  });

  it('PM2: a release that fails once live is reported switched back', async () => {
    const { exec } = dryRun((e) =>
      e.answer(isScript(ACTIVATE), {
        code: 3,
        stdout:
          'beside port 40123\nbeside status 200\nprevious releases/old\nreloaded 800 daemon\nstatus 500\nswitched-back\nreloaded 700 cli\n',
      }),
    );
    const site = siteOf('nodejs-ssr', { domain: 'app.example.com' });
    const activate = deploySteps.deploy(site, plan({ hooks: [] }), progress()).find((s) => s.name === 'activate')!;
    await expect(activate.run(makeContext(exec, site))).rejects.toThrow(
      /health check failed once live: \/health answered 500; switched back to releases\/old/,
    );
  });

  it('Generic Port: Node and PM2 first; its launcher runs the start command; the first activation writes a fork-mode ecosystem, starts it and saves it', async () => {
    const site = siteOf('generic-port', { domain: 'port.example.com' });
    const start = 'exec ./serve --port "$PORT"';
    const steps = deploySteps.deploy(site, plan({ hooks: [], buildCommand: null, startCommand: start }), progress());
    expect(steps.map((s) => s.name).slice(0, 3)).toEqual(['ensure Node.js', 'ensure PM2', 'ensure git']);

    const { exec: writing, lines: written } = dryRun();
    await steps.find((s) => s.name === 'write environment')!.run(makeContext(writing, site));
    const launcher = written.find((l) => l.includes('siteplane-placeholder.cjs'));
    // The command is a JSON string inside the launcher (an argument of WRITE_ENVIRONMENT), not a shell line of ours.
    expect(launcher).toContain(JSON.stringify(start));
    expect(launcher).toMatch(/"asUser":"alice"/);

    const { exec, lines } = dryRun((e) => {
      e.answer(isVhostRead(site), { stdout: renderSiteVhost(site) });
      e.answer(isScript(STAND_IN), { stdout: 'port 40123\nstatus 200\npid 4242\n' });
      e.answer(isScript(ACTIVATE), { stdout: 'previous releases/initial\nreloaded 812 in-place\nstatus 200\n' });
      e.answer(isScript(STOP_STAND_IN), { stdout: 'stopped\n' });
    });
    const ctx = makeContext(exec, site);
    await steps.find((s) => s.name === 'activate')!.run(ctx);
    const all = lines.join('\n');
    // The ecosystem file (its content on stdin; renderEcosystem's fork mode is checked in templates.test.ts).
    expect(
      lines.some((l) => l.includes('/home/alice/port.example.com/ecosystem.config.cjs') && l.includes('"asUser":"alice"')),
    ).toBe(true);
    // The release tried beside the live one and kept as the stand-in; the vhost names it as a
    // backup while PM2 restarts the process in place, asked on the site's own port; then the vhost
    // without it, and the stand-in stopped, in that order.
    const at = (test: (l: string) => boolean) => lines.findIndex(test);
    const standIn = at((l) => l.includes('stand-in /home/alice/port.example.com/releases/'));
    const withBackup = renderSiteVhost(site, { standIn: 40123 });
    expect(withBackup).toMatch(
      /upstream siteplane_[0-9a-f]{16} \{\n {4}server 127\.0\.0\.1:\d+ max_fails=0;\n {4}server 127\.0\.0\.1:40123 backup max_fails=0;/,
    );
    const routed = at((l) => l.includes(`<redacted ${Buffer.byteLength(withBackup, 'utf8')} bytes>`));
    const goLive = at((l) => l.startsWith('bash -c') && l.includes(' activate '));
    const unrouted = at((l) => l.includes(`<redacted ${Buffer.byteLength(renderSiteVhost(site), 'utf8')} bytes>`));
    const stopped = at((l) => l.includes('stop-stand-in 40123'));
    expect([standIn, routed, goLive, unrouted, stopped].every((i) => i >= 0)).toBe(true);
    expect([standIn, routed, goLive, unrouted, stopped]).toEqual(
      [standIn, routed, goLive, unrouted, stopped].sort((x, y) => x - y),
    );
    expect(lines[goLive]).toContain('"START_WITH":"/home/alice/port.example.com/ecosystem.config.cjs"');
    expect(lines[goLive]).toContain('"CHECK_MODE":"live"');
    expect(lines[goLive]).toMatch(/"asUser":"alice"/);
    expect(lines[goLive]).toContain(`http://127.0.0.1:${site.port}/health`);
    expect(lines[goLive]).toContain("'Host: port.example.com'");
    expect(all).toMatch(/pm2 save/);
    expect(
      ctx.logs.some((l) => /answered \/health with 200 beside the live release \(port 40123\), kept as its stand-in/.test(l)),
    ).toBe(true);
    expect(ctx.logs).toContain(`health check: /health answered 200 on the site's port ${site.port}`);
    expect(ctx.logs.some((l) => /started PM2 process .* in place in 812 ms/.test(l))).toBe(true);
    expect(ctx.logs).toContain('the stand-in on port 40123 stopped');
  });

  it('Generic Port: a release that fails beside the live one changes nothing (no vhost, no restart)', async () => {
    const site = siteOf('generic-port', { domain: 'port.example.com' });
    const steps = deploySteps.deploy(site, plan({ hooks: [], buildCommand: null, startCommand: 'exec ./serve' }), progress());
    const { exec, lines } = dryRun((e) =>
      e.answer(isScript(STAND_IN), { code: 4, stdout: 'port 40123\nstatus 000\nError: boom\n' }),
    );
    const ctx = makeContext(exec, site);
    await expect(steps.find((s) => s.name === 'activate')!.run(ctx)).rejects.toThrow(
      /health check failed: .* answered \/health with 000 within \d+ s beside the live release \(port 40123\), which keeps serving/,
    );
    expect(ctx.logs).toContain('  Error: boom');
    expect(lines.some((l) => l.includes(' activate ') || l.includes('stop-stand-in') || l.includes('sites-available'))).toBe(
      false,
    );
  });

  it('Generic Port rollback: the release it returns to stands in once it answers anything on /, asked the same way in place', async () => {
    const site = siteOf('generic-port', { domain: 'port.example.com' });
    const { exec, lines } = dryRun((e) => {
      e.answer(isVhostRead(site), { stdout: renderSiteVhost(site) });
      e.answer(isScript(STAND_IN), { stdout: 'port 40999\nstatus 404\npid 4243\n' });
      e.answer(isScript(ACTIVATE), { stdout: 'previous releases/new\nreloaded 700 in-place\nstatus 404\n' });
      e.answer(isScript(STOP_STAND_IN), { stdout: 'stopped\n' });
    });
    const [, activate] = deploySteps.rollback(site, { deploymentUuid: 'rb', release: '20261126T000001Z-v1' });
    await activate!.run(makeContext(exec, site));
    expect(lines.find((l) => l.includes('stand-in /home/alice/port.example.com/releases/20261126T000001Z-v1'))).toMatch(/ any /);
    const goLive = lines.find((l) => l.startsWith('bash -c') && l.includes(' activate '));
    expect(goLive).toContain('"CHECK_MODE":"any"');
    expect(goLive).toContain(`http://127.0.0.1:${site.port}/ `);
    expect(lines.some((l) => l.includes('stop-stand-in 40999'))).toBe(true);
  });

  it('Generic Port without a start command (reset while queued): the environment step says so', async () => {
    const site = siteOf('generic-port');
    const step = deploySteps.deploy(site, plan({ startCommand: null }), progress()).find((s) => s.name === 'write environment')!;
    await expect(step.run(makeContext(dryRun().exec, site))).rejects.toThrow(
      /no start command: set the deploy setting startCommand/,
    );
  });

  it('PM2 rollback: switch and reload, no try beside, no health check, one round trip', async () => {
    const { exec, lines } = dryRun((e) =>
      e.answer(isScript(ACTIVATE), { stdout: 'previous releases/new\nreloaded 900 daemon\n' }),
    );
    const site = siteOf('nodejs-ssr', { domain: 'app.example.com' });
    const [, activate] = deploySteps.rollback(site, { deploymentUuid: 'rb', release: '20261126T000001Z-v1' });
    await activate!.run(makeContext(exec, site));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain("releases/20261126T000001Z-v1 app.example.com '' 0 0");
    expect(lines[0]).not.toContain('/home/alice/app.example.com/releases/20261126T000001Z-v1 siteplane-placeholder.cjs');
  });
});

describe('cancel (issue 11 item 3, server side)', () => {
  it('a cancelled deployment starts no further step', async () => {
    const controller = new AbortController();
    controller.abort();
    const { exec, lines } = dryRun();
    const site = siteOf('static-html');
    const steps = deploySteps.deploy(site, plan(), progress(controller.signal));
    await expect(steps[1]!.run(makeContext(exec, site))).rejects.toThrow(DeployCancelled);
    expect(lines).toEqual([]);
  });

  it('a hook that exits non-zero fails its step with its exit status (the operation’s exit_code)', async () => {
    const { exec } = dryRun((e) => e.answer(isScript(HOOK), { code: 3, stderr: 'broken\n' }));
    const site = siteOf('static-html');
    const hook = { name: 'fails', command: 'exit 3', stage: 'before-activate' as const, enabled: true };
    const step = deploySteps.deploy(site, plan({ hooks: [hook] }), progress()).find((s) => s.name === 'hook: fails')!;
    const ctx = makeContext(exec, site);
    const failure = await step.run(ctx).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(UserCommandFailed);
    expect(failure).toMatchObject({ exitCode: 3, message: expect.stringMatching(/^hook: fails exited with 3 after /) });
    expect(ctx.logs).toContain('  broken');
  });

  it('a running build is stopped by TERM to its process group (as the site user) and fails as cancelled', async () => {
    const controller = new AbortController();
    const seen: { argv: readonly string[]; options: RunOptions }[] = [];
    let finish: (r: CommandResult) => void = () => undefined;
    const exec: Executor & { runDetached: Executor['run'] } = {
      kind: 'dry-run',
      run: async (argv, options = {}) => {
        seen.push({ argv, options });
        if (argv[2] === CANCEL) finish({ code: 143, stdout: '', stderr: 'Terminated\n' });
        return { code: 0, stdout: '', stderr: '' };
      },
      runDetached: (argv, options = {}) => {
        seen.push({ argv, options });
        return new Promise((resolve) => {
          finish = resolve;
        });
      },
      close: async () => {},
    };
    const site = siteOf('static-html', { user: 'alice' });
    const build = deploySteps.deploy(site, plan(), progress(controller.signal)).find((s) => s.name === 'build')!;
    const running = build.run(makeContext(exec, site));
    await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    await expect(running).rejects.toThrow(/build: cancelled/);
    const cancel = seen.find((s) => s.argv[2] === CANCEL);
    expect(cancel?.options.asUser).toBe('alice');
    expect(cancel?.argv[4]).toBe(seen[0]?.argv[4]);
  });
});

describe('manifest and prune (issue 11 item 6)', () => {
  it('the manifest names variables and hashes their values, never holds them', () => {
    const text = renderManifest(
      plan(),
      { commit: { sha: 'c'.repeat(40), author: 'A', message: 'm' }, previous: null },
      'site-uuid',
      new Date(0),
    );
    expect(text).not.toContain(BUILD_SECRET);
    expect(text).not.toContain(RUNTIME_SECRET);
    expect(text).not.toContain(TOKEN);
    const manifest = JSON.parse(text);
    expect(manifest.environment.runtime).toEqual(['APP_KEY']);
    expect(manifest.environment.hash).toMatch(/^[0-9a-f]{64}$/);
    expect(manifest.migrations).toBe(true);
    expect(manifest.commit.sha).toBe('c'.repeat(40));
  });

  it('prune keeps N, never the live or the previous release, and drops partial exports', () => {
    const names = ['initial', 'r1', 'r2', 'r3', 'r4', 'r5.partial'];
    expect(releasesToRemove(names, 2, 'r5', 'r4')).toEqual(['r5.partial', 'initial', 'r1', 'r2']);
    // The live release is an old one (after a rollback): it and the previous stay, the rest go oldest first.
    expect(releasesToRemove(['initial', 'r1', 'r2', 'r3', 'r4'], 2, 'r1', 'r4')).toEqual(['initial', 'r2', 'r3']);
    expect(releasesToRemove(['r1', 'r2'], 5, 'r2', 'r1')).toEqual([]);
    // A job resumed after activation does not know the previous release: the one made before the live one stays.
    expect(releasesToRemove(['initial', 'r1', 'r2', 'r3', 'r4'], 2, 'r4', null)).toEqual(['initial', 'r1', 'r2']);
    expect(releasesToRemove(['initial', 'r1', 'r2', 'r3', 'r4'], 2, 'r2', null)).toEqual(['initial', 'r3', 'r4']);
  });

  it('prune with the control plane’s kept list: a cancelled or failed release never pushes a rollback target out', () => {
    // r1 live before (a rollback to it), r2 and r3 successful, r4c a cancelled deploy, r5 just went live, keep 3.
    const names = ['initial', 'r1', 'r2', 'r3', 'r4c', 'r5', 'r6.partial'];
    // By count alone r2 and r3 went, though POST …/rollback still offers them (the system test's failure).
    expect(releasesToRemove(names, 3, 'r5', 'r1')).toEqual(['r6.partial', 'initial', 'r2', 'r3']);
    expect(releasesToRemove(names, 3, 'r5', 'r1', ['r3', 'r2'])).toEqual(['r6.partial', 'initial', 'r4c']);
    // Keep 1: only the live release and the one live before it stay.
    expect(releasesToRemove(names, 1, 'r5', 'r3', [])).toEqual(['r6.partial', 'initial', 'r1', 'r2', 'r4c']);
  });
});
