import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDeployTools } from '../../../src/provisioning/deploy/ensure-deploy-tools.js';
import { deploySteps } from '../../../src/provisioning/deploy/index.js';
import type { DeployPlan, DeployProgress } from '../../../src/provisioning/deploy/plan.js';
import { detectFacts } from '../../../src/provisioning/detect-facts.js';
import type { SshExecutor } from '../../../src/provisioning/executors/ssh.js';
import { recipeFor } from '../../../src/provisioning/recipes/index.js';
import type { ProvisionedSite, Step } from '../../../src/provisioning/step.js';
import { makeContext, type TestContext } from '../../provisioning/support/context.js';
import { hostExecutor, hostPhp, requireTestHost } from '../support/test-host.js';
import { runId } from './support/harness.js';
import { freePort, listDir, mustRun, pm2Kill, run, useHost } from './support/host.js';

/**
 * Issue 11 items 4, 5, 8 (server side): the deploy steps run directly against the pristine test
 * host (no control plane: E's job wiring is elsewhere), for a static-html, a PHP and a NodeJS SSR
 * site created by their recipes' steps. The code comes from bare git repositories on the host,
 * served by `git daemon` on its loopback. Each site: deploy v1 → v1; deploy v2 under a bounded
 * request loop run on the host (0 failures, only v1 or v2 bodies); v3 whose health check fails
 * leaves v2 serving with 0 answers from v3; rollback to v1; prune keeps N. Timings are printed, not asserted.
 */
const host = requireTestHost();
useHost(host);
const id = runId();
const user = `spd${id}`;
const KEEP = 2;
const GIT_BASE = `/srv/siteplane-git-${id}`;
const WORK = `/srv/siteplane-work-${id}`;
const figures: Record<string, unknown> = {};

const progress = (): DeployProgress & { commits: string[] } => {
  const commits: string[] = [];
  return {
    commits,
    cancelled: new AbortController().signal,
    async commitResolved(c) {
      commits.push(c.sha);
    },
  };
};

function site(type: 'static-html' | 'php' | 'nodejs-ssr', port: number | null): ProvisionedSite {
  return {
    uuid: `00000000-0000-4000-8000-${id.padStart(12, '0').slice(-12)}`,
    type,
    domain: `${type}-${id}.siteplane.test`,
    user,
    options: {},
    ssl: { enabled: false, provider: null, wildcard: false, includeWww: false },
    database: null,
    runtime:
      type === 'php'
        ? { php: { version: hostPhp(host), install: true } }
        : type === 'nodejs-ssr'
          ? { node: { version: '20.x', action: 'install' } }
          : {},
    port,
    secrets: {},
  };
}

/** Every command the steps run on the host (one SSH round trip each), with its duration. */
interface CommandTime {
  command: string;
  ms: number;
}
let commandTimes: CommandTime[] = [];

/**
 * Times every command the executor runs, the detached runs' own start, polls and reads included
 * (they call the instance's `run`).
 */
function timeCommands(exec: SshExecutor): void {
  const inner = exec.run.bind(exec);
  exec.run = async (argv, options) => {
    const started = Date.now();
    try {
      return await inner(argv, options);
    } finally {
      // The script's first line or the program and its first argument: enough to tell them apart.
      const script = argv[0] === 'sh' || argv[0] === 'bash' ? (argv[2] ?? '').split('\n').find((l) => !/^set /.test(l)) : '';
      commandTimes.push({
        command: `${argv.slice(0, 2).join(' ')} ${script ?? ''}`.trim().slice(0, 70),
        ms: Date.now() - started,
      });
    }
  };
}

/** Round trips and their time, the slowest first, for the figures. */
function roundTrips(times: CommandTime[]): { count: number; ms: number; slowest: string[] } {
  return {
    count: times.length,
    ms: times.reduce((sum, t) => sum + t.ms, 0),
    slowest: [...times]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 6)
      .map((t) => `${t.ms} ms ${t.command}`),
  };
}

async function timedSteps(
  ctx: TestContext,
  steps: Step[],
): Promise<{ total: number; user: number; error: Error | null; steps: Record<string, number> }> {
  let userMs = 0;
  const times: Record<string, number> = {};
  const started = Date.now();
  for (const step of steps) {
    const t = Date.now();
    try {
      await step.run(ctx);
    } catch (error) {
      return { total: Date.now() - started, user: userMs, error: error as Error, steps: times };
    } finally {
      times[step.name] = Date.now() - t;
      if (step.name === 'build' || step.name.startsWith('hook: ')) userMs += Date.now() - t;
    }
  }
  return { total: Date.now() - started, user: userMs, error: null, steps: times };
}

/** Commits files (path → content; null deletes) into the repository `name` and pushes main. */
async function commit(name: string, files: Record<string, string | null>, message: string): Promise<void> {
  const dir = `${WORK}/${name}`;
  for (const [path, content] of Object.entries(files)) {
    if (content === null) await mustRun('rm', ['-f', '--', `${dir}/${path}`]);
    else await mustRun('sh', ['-c', 'mkdir -p "$(dirname "$1")" && cat > "$1"', 'sh', `${dir}/${path}`], { input: content });
  }
  const git = (...args: string[]) =>
    mustRun('git', ['-C', dir, '-c', 'user.name=Tester', '-c', 'user.email=t@example.test', ...args]);
  await git('add', '-A');
  await git('commit', '-q', '-m', message);
  await git('push', '-q', `${GIT_BASE}/${name}.git`, 'HEAD:main');
}

function plan(name: string, release: string, extra: Partial<DeployPlan> = {}): DeployPlan {
  return {
    deploymentUuid: `dep-${release}`,
    release,
    source: {
      kind: 'git',
      url: `git://127.0.0.1:9418/${name}.git`,
      branch: 'main',
      commit: null,
      appFolder: null,
      credentials: null,
    },
    buildCommand: null,
    artifactPath: null,
    hooks: [],
    sharedPaths: [],
    environment: { build: {}, runtime: {} },
    keepReleases: KEEP,
    healthCheck: { path: '/', timeoutSeconds: 10 },
    startCommand: null,
    ...extra,
  };
}

/**
 * curl through nginx on the host, one request after another 20 ms apart, until `stop` exists (at
 * most 3000 requests): "<body> <status>" lines; a request with no answer in 5 s (or refused) is
 * " 000".
 */
function requestLoop(domain: string, stop: string): Promise<string[]> {
  const script = `i=0
while [ ! -e "$2" ] && [ $i -lt 3000 ]; do
  curl -s --max-time 5 -w ' %{http_code}\\n' --resolve "$1:80:127.0.0.1" "http://$1/" || true
  i=$((i + 1)); sleep 0.02
done`;
  return run('sh', ['-c', script, 'sh', domain, stop], { timeoutMs: 180_000 }).then((r) => r.stdout.split('\n').filter(Boolean));
}

async function body(domain: string): Promise<string> {
  const r = await run('curl', ['-s', '--max-time', '5', '--resolve', `${domain}:80:127.0.0.1`, `http://${domain}/`]);
  return r.stdout.trim();
}

const PLANTED_BASHRC = 'echo "planted bashrc ran" >&2; exit 9';

interface Case {
  type: 'static-html' | 'php' | 'nodejs-ssr';
  files: (v: string) => Record<string, string | null>;
  broken: Record<string, string | null>;
  extra: Partial<DeployPlan>;
}

const CASES: Case[] = [
  { type: 'static-html', files: (v) => ({ 'index.html': `static-${v}` }), broken: { 'index.html': null }, extra: {} },
  {
    type: 'php',
    files: (v) => ({ 'index.php': `<?php echo "php-${v}" . (getenv('GREETING') ?: '');\n` }),
    broken: { 'index.php': '<?php http_response_code(500); echo "broken";\n' },
    extra: { sharedPaths: [{ path: 'uploads', kind: 'directory' }] },
  },
  {
    type: 'nodejs-ssr',
    files: (v) => ({
      'package.json': JSON.stringify({ name: 'app', version: '1.0.0', main: 'server.js' }),
      'package-lock.json': JSON.stringify({
        name: 'app',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: { '': { name: 'app', version: '1.0.0' } },
      }),
      // Each answer takes 150 ms, so a request is nearly always in progress when PM2 replaces the
      // worker: a reload that cuts the old worker short fails the test (nginx answers 502).
      'server.js': `require('node:http').createServer((q, r) => setTimeout(() => r.end('node-${v}' + (process.env.GREETING || '')), 150)).listen(Number(process.env.PORT), '127.0.0.1');\n`,
    }),
    broken: {
      'server.js': `require('node:http').createServer((q, r) => { r.statusCode = 500; r.end('broken'); }).listen(Number(process.env.PORT), '127.0.0.1');\n`,
    },
    extra: {
      buildCommand: 'npm ci --no-audit --no-fund && test "$BUILD_SECRET" = build-only',
      hooks: [{ name: 'say hello', command: 'echo "hook ran in $(pwd)"', stage: 'before-activate', enabled: true }],
      environment: { build: { BUILD_SECRET: 'build-only' }, runtime: { GREETING: '' } },
    },
  },
];

describe.skipIf(!process.env.SITEPLANE_SYSTEM_TESTS)('deploy steps on a real server (issue 11 items 4, 5, 8)', () => {
  let exec: SshExecutor;
  let ctx: (s: ProvisionedSite) => TestContext;

  beforeAll(async () => {
    exec = hostExecutor(host);
    const facts = await detectFacts(exec);
    timeCommands(exec);
    ctx = (s) => makeContext(exec, s, { facts, settings: { npmRegistry: null, nodeSource: 'npm' } });
    // git is the deploy steps' to install (ensure git); the test's repositories use it afterwards.
    await ensureDeployTools().run(ctx(site('static-html', null)));
    await mustRun('install', ['-d', GIT_BASE, WORK]);
    for (const c of CASES) {
      await mustRun('git', ['init', '-q', '--bare', '-b', 'main', `${GIT_BASE}/${c.type}.git`]);
      await mustRun('git', ['init', '-q', '-b', 'main', `${WORK}/${c.type}`]);
    }
    await mustRun('sh', [
      '-c',
      'setsid -f git daemon --reuseaddr --listen=127.0.0.1 --port=9418 --export-all --base-path="$1" --pid-file="$1/daemon.pid" >/dev/null 2>&1',
      'sh',
      GIT_BASE,
    ]);
  }, 600_000);

  afterAll(async () => {
    await run('sh', ['-c', 'kill "$(cat "$1/daemon.pid")"', 'sh', GIT_BASE]);
    await pm2Kill(user);
    await exec?.close();
    console.log(`deploy figures: ${JSON.stringify(figures, null, 2)}`);
  });

  for (const c of CASES) {
    it(`${c.type}: v1, v2 under load with 0 failures, a failing v3 leaves v2, rollback to v1, prune keeps ${KEEP}`, async () => {
      const s = site(c.type, c.type === 'nodejs-ssr' ? await freePort() : null);
      const context = ctx(s);
      for (const step of recipeFor(c.type).create(s)) await step.run(context);
      // The site user's own ~/.bashrc, hostile: every `bash -c` Siteplane runs as that user over
      // ssh (export, hooks, go-live) would fail with it if Debian's bash read it (SSH_CLIENT set).
      await mustRun('runuser', ['-u', user, '--', 'sh', '-c', 'printf "%s\\n" "$1" > ~/.bashrc', 'sh', PLANTED_BASHRC]);

      // The vhost as an older Siteplane wrote it (no disable_symlinks): the first deploy brings it
      // up to date (refresh-vhost.ts), for the Node site too; v2's figures are then those of a
      // deploy with nothing to update.
      const vhost = `/etc/nginx/sites-available/${s.domain}.conf`;
      await mustRun('sed', ['-i', '/disable_symlinks/d', '--', vhost]);
      await commit(c.type, c.files('v1'), 'v1');
      const p1 = progress();
      const d1 = await timedSteps(context, deploySteps.deploy(s, plan(c.type, '20261126T000001Z-v1', c.extra), p1));
      if (d1.error) throw new Error(`${d1.error.message}\n${context.logs.join('\n')}`);
      expect((await mustRun('cat', ['--', vhost])).stdout).toContain('disable_symlinks if_not_owner from=$document_root;');
      expect(context.logs.some((line) => line.startsWith(`updated nginx vhost ${vhost}`))).toBe(true);
      expect(p1.commits).toHaveLength(1);
      expect(context.logs.filter((line) => line.includes('planted bashrc'))).toEqual([]);
      expect(await body(s.domain)).toBe(`${c.type === 'static-html' ? 'static' : c.type === 'php' ? 'php' : 'node'}-v1`);

      await commit(c.type, c.files('v2'), 'v2');
      const stop = `/tmp/stop-${id}-${c.type}`;
      const loop = requestLoop(s.domain, stop);
      await new Promise((r) => setTimeout(r, 300));
      commandTimes = [];
      const d2 = await timedSteps(context, deploySteps.deploy(s, plan(c.type, '20261126T000002Z-v2', c.extra), progress()));
      const d2Commands = commandTimes;
      await new Promise((r) => setTimeout(r, 300));
      await mustRun('touch', [stop]);
      const answers = await loop;
      if (d2.error) throw new Error(`${d2.error.message}\n${context.logs.join('\n')}`);
      const prefix = c.type === 'static-html' ? 'static' : c.type === 'php' ? 'php' : 'node';
      const failed = answers.filter((line) => !new RegExp(`^${prefix}-v[12] 200$`).test(line));
      figures[`${c.type}: requests during the v2 deploy`] = answers.length;
      figures[`${c.type}: failed or foreign answers during the v2 deploy`] = failed.length;
      figures[`${c.type}: v2 deploy total ms`] = d2.total;
      figures[`${c.type}: platform overhead ms (all but build and hooks)`] = d2.total - d2.user;
      figures[`${c.type}: v2 deploy ms per step`] = d2.steps;
      figures[`${c.type}: v2 deploy round trips`] = roundTrips(d2Commands);
      // Never an answer from a half-built release or an error page, and never a request lost (no
      // answer within 5 s, or refused): every answer is v1 or v2, for every type. For Node this is
      // PM2's cluster reload with the launcher's graceful stop (templates/graceful-stop.ts).
      const lost = failed.filter((line) => line === ' 000');
      figures[`${c.type}: requests lost (no answer in 5 s) during the v2 deploy`] = lost.length;
      expect(failed).toEqual([]);
      expect(answers.some((a) => a.startsWith(`${prefix}-v2`))).toBe(true);
      expect(await body(s.domain)).toBe(`${prefix}-v2`);
      const releases = await listDir(`/home/${user}/${s.domain}/releases`);
      expect(releases.sort()).toEqual(['20261126T000001Z-v1', '20261126T000002Z-v2']);

      await commit(c.type, c.broken, 'v3 broken');
      const stop3 = `${stop}-3`;
      const loop3 = requestLoop(s.domain, stop3);
      const d3 = await timedSteps(context, deploySteps.deploy(s, plan(c.type, '20261126T000003Z-v3', c.extra), progress()));
      await mustRun('touch', [stop3]);
      const answers3 = await loop3;
      expect(d3.error?.message).toMatch(/health check failed/);
      expect(await body(s.domain)).toBe(`${prefix}-v2`);
      const bad3 = answers3.filter((line) => line !== `${prefix}-v2 200`);
      figures[`${c.type}: failed or foreign answers during the failing v3 deploy`] = `${bad3.length} of ${answers3.length}`;
      figures[`${c.type}: answers during the failing v3 deploy`] = Object.fromEntries(
        [...new Set(answers3)].map((a) => [a, answers3.filter((x) => x === a).length]),
      );
      // Every type: a PM2 release is refused beside the live one, a static or PHP release is asked
      // before the switch (check-before-switch.ts); none serves a visitor.
      expect(bad3).toEqual([]);
      expect(d3.error?.message).toMatch(c.type === 'nodejs-ssr' ? /beside the live release/ : /before the switch/);

      commandTimes = [];
      const t = Date.now();
      for (const step of deploySteps.rollback(s, { deploymentUuid: 'rb', release: '20261126T000001Z-v1' }))
        await step.run(context);
      figures[`${c.type}: rollback ms`] = Date.now() - t;
      figures[`${c.type}: rollback round trips`] = roundTrips(commandTimes);
      figures[`${c.type}: timings the steps logged`] = context.logs.filter((l) => /\d ms\b| s$/.test(l)).slice(-12);
      expect(await body(s.domain)).toBe(`${prefix}-v1`);
      const link = await run('readlink', [`/home/${user}/${s.domain}/current`]);
      expect(link.stdout.trim()).toBe('releases/20261126T000001Z-v1');
      if (c.type === 'static-html') {
        // Cancel: a build that would run for a minute is stopped with its process group; v1 keeps serving.
        const controller = new AbortController();
        const cancelPlan = plan(c.type, '20261126T000004Z-v4', { buildCommand: 'sleep 61 | cat' });
        const cancelProgress = { ...progress(), cancelled: controller.signal };
        const t4 = Date.now();
        const running = timedSteps(context, deploySteps.deploy(s, cancelPlan, cancelProgress));
        // Cancelled once the build runs on the server.
        while ((await run('pgrep', ['-u', user, '-f', 'sleep 61'])).stdout.trim() === '' && Date.now() - t4 < 60_000) {
          await new Promise((r) => setTimeout(r, 100));
        }
        const cancelAt = Date.now();
        controller.abort();
        const d4 = await running;
        figures[`${c.type}: cancel → deploy ended, ms`] = Date.now() - cancelAt;
        expect(d4.error?.name).toBe('DeployCancelled');
        expect(Object.keys(d4.steps)).toContain('build');
        // Stopped, not finished: the build's exit status is not 0.
        expect(context.logs.filter((l) => l.startsWith('build: exit ')).at(-1)).not.toMatch(/^build: exit 0 /);
        expect((await run('pgrep', ['-u', user, '-f', 'sleep 61'])).stdout.trim()).toBe('');
        expect(await body(s.domain)).toBe(`${prefix}-v1`);
      }
      if (c.type === 'nodejs-ssr') {
        // Every reload asked PM2's daemon over its socket, not through the `pm2` command line
        // (deploy/pm2-reload.ts): if PM2's client modules moved, the fallback works but is slower.
        const reloads = context.logs.filter((l) => l.startsWith('reloaded PM2 process'));
        expect(reloads.length).toBeGreaterThanOrEqual(3);
        expect(reloads.filter((l) => !l.includes("through the daemon's socket"))).toEqual([]);
      }
      if (c.type === 'nodejs-ssr') {
        // What one pm2 command costs by itself here (a Node start and a round trip to the daemon).
        const home = `/home/${user}`;
        const ping = Date.now();
        await mustRun('runuser', ['-u', user, '--', 'env', `HOME=${home}`, `PM2_HOME=${home}/.pm2`, 'pm2', 'ping']);
        figures[`${c.type}: one 'pm2 ping' ms (the CLI's own cost)`] = Date.now() - ping;
      }
      if (c.type === 'nodejs-ssr') {
        const env = await run('stat', ['-c', '%a %U', `/home/${user}/${s.domain}/releases/20261126T000001Z-v1/.siteplane.env`]);
        expect(env.stdout.trim()).toBe(`600 ${user}`);
        expect(context.logs.join('\n')).toContain('hook ran in');
        // The user's processes (PM2's daemon and the app it started with its environment) never
        // saw Siteplane's ssh session: SSH_CONNECTION named its address and port.
        const processes = (await mustRun('pgrep', ['-u', user])).stdout.split('\n').filter(Boolean);
        expect(processes.length).toBeGreaterThanOrEqual(2);
        const variables = [];
        for (const pid of processes) {
          const environ = await run('cat', [`/proc/${pid}/environ`]);
          variables.push(...environ.stdout.split('\0').filter((v) => v.startsWith('HOME=') || v.startsWith('SSH_')));
        }
        expect(variables.filter((v) => v.startsWith('HOME='))).toHaveLength(processes.length);
        expect(variables.filter((v) => v.startsWith('SSH_'))).toEqual([]);
      }
    }, 1_800_000);
  }
});
