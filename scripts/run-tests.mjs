#!/usr/bin/env node
// Runs every test: the whole suite on SQLite (with the system tests when this is root: a loopback
// sshd and Pebble from scripts/test-env, and a pristine Debian test host that Siteplane provisions
// from nothing — scripts/test-env/test-host.sh), then the storage, queue, HTTP and cluster suites
// again on PostgreSQL (cluster: several `siteplane serve` processes on one database). Ends with the
// line `N passed, N failed`.
//   --system-only          only the system tests
//   --fresh-only [--os X]  only the pristine-host suites (test/system/fresh), on Debian 12 or 13
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';

const argv = process.argv.slice(2);
const args = new Set(argv);
const osIndex = argv.indexOf('--os');
const hostOs = osIndex >= 0 ? argv[osIndex + 1] : 'debian12';
const freshOnly = args.has('--fresh-only');
const isRoot = process.getuid?.() === 0;
const wantSystem = !args.has('--no-system') && process.env.SITEPLANE_SYSTEM_TESTS !== '0';
const systemOnly = args.has('--system-only');
mkdirSync('.test-output', { recursive: true });

function sh(cmd, argv, env = {}) {
  const r = spawnSync(cmd, argv, { stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status ?? 1;
}

// The shared pristine host: the fresh suites provision it from nothing, the other sites suites
// then use it as Siteplane left it. Stopped (and removed) at the end, whatever happened.
const HOST = 'main';
let hostStarted = false;
function stopHost() {
  if (hostStarted) sh('bash', ['scripts/test-env/test-host.sh', 'stop', HOST]);
  hostStarted = false;
}
process.on('exit', () => {
  stopHost();
  stopDaemons();
});
// A stage runs as an asynchronous child in a process group of its own, so a SIGINT or SIGTERM
// reaches this handler at once (not after the stage), which ends the stage's whole group before
// the exit handler stops the host and the daemons.
let runningStage = null;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    if (runningStage?.pid) {
      try {
        process.kill(-runningStage.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    process.exit(1);
  });
}

// The loopback sshd (setup.sh) and Pebble (pebble.sh) are stopped at the end when this run started
// them; ones already running (a developer's) are left as they were.
const STATE = '/var/lib/siteplane-test';
const DAEMONS = [
  { pidFile: `${STATE}/ssh/sshd.pid`, stop: 'scripts/test-env/teardown.sh' },
  { pidFile: `${STATE}/pebble/pebble.pid`, stop: 'scripts/test-env/pebble-stop.sh' },
];
const daemonsBefore = new Set(DAEMONS.filter((d) => pidAlive(d.pidFile)).map((d) => d.stop));
function pidAlive(pidFile) {
  try {
    const pid = Number(readFileSync(pidFile, 'utf8').trim());
    return pid > 0 && existsSync(`/proc/${pid}`);
  } catch {
    return false;
  }
}
function stopDaemons() {
  for (const d of DAEMONS) if (!daemonsBefore.has(d.stop) && pidAlive(d.pidFile)) sh('bash', [d.stop]);
}

// A run leaves no daemon behind: every process that appeared during it, was adopted by init (its
// starter is gone) and is still alive at the end (after the host and the daemons above are
// stopped) is listed and counted as a failure.
// SITEPLANE_LEFTOVER_CHECK=0 turns this off on a machine where other work starts processes meanwhile.
const leftoverCheck = process.env.SITEPLANE_LEFTOVER_CHECK !== '0';
const processesBefore = new Set(processIds());
function processIds() {
  return readdirSync('/proc').filter((name) => /^\d+$/.test(name));
}
function leftoverProcesses() {
  return (
    processIds()
      .filter((pid) => !processesBefore.has(pid))
      .map((pid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          const parent = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
          const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
          return { pid, parent, command };
        } catch {
          return null; // ended meanwhile
        }
      })
      // A daemon outlives whoever started it and is adopted by init: only those count, so a shell
      // someone runs beside the tests, or a database's per-connection worker, is not taken for one.
      .filter((p) => p !== null && p.parent === '1' && p.command !== '')
  );
}

let system = false;
if ((wantSystem || freshOnly) && isRoot) {
  for (const script of ['scripts/test-env/setup.sh', 'scripts/test-env/pebble.sh']) {
    if (!existsSync(script)) continue;
    if (sh('bash', [script]) !== 0) {
      console.error(`${script} failed: the system tests cannot run`);
      process.exit(1);
    }
  }
  // Images the fresh suites start (their own hosts) are built here, not in a test's time: the shared
  // host's OS, and Debian 13 for the operator's machine (fresh/operator-guide.test.ts).
  for (const os of new Set([hostOs, 'debian13']))
    if (sh('bash', ['scripts/test-env/test-host.sh', 'build', '--os', os]) !== 0) process.exit(1);
  // Pristine means new: a host of that name left by an earlier run (provisioned since) goes first.
  sh('bash', ['scripts/test-env/test-host.sh', 'stop', HOST]);
  const started = spawnSync('bash', ['scripts/test-env/test-host.sh', 'start', HOST, '--index', '1', '--os', hostOs], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (started.status !== 0) {
    console.error('the test host did not start: the system tests cannot run');
    process.exit(1);
  }
  hostStarted = true;
  console.log(started.stdout.trim());
  system = true;
} else if (wantSystem || freshOnly) {
  console.log('Not root: the system tests (real sshd, nginx, PHP-FPM, Pebble) are skipped. Run as root to include them.');
}

const runs = [];
const vitest = async (name, paths, env, extra = []) => {
  const out = `.test-output/${name}.json`;
  const child = spawn(
    'npx',
    ['vitest', 'run', ...paths, ...extra, '--reporter=default', '--reporter=json', `--outputFile.json=${out}`],
    { stdio: 'inherit', env: { ...process.env, ...env }, detached: true },
  );
  runningStage = child;
  const code = await new Promise((resolve) => child.on('close', (status) => resolve(status ?? 1)));
  runningStage = null;
  runs.push({ name, out, code });
};

const FRESH = 'packages/server/test/system/fresh';
// The fresh suites spend their time waiting on their hosts (apt, npm): each file runs in a worker
// of its own, on a host of its own, four side by side. Six at once kept the load average at 17-27
// on 2 cores, and vitest's own calls between its workers timed out ("Timeout calling
// onTaskUpdate"), failing a stage whose every test passed (2026-11-27).
const SIDE_BY_SIDE = ['--maxWorkers=4', '--minWorkers=1'];
const hostEnv = { SITEPLANE_TEST_HOST: HOST, SITEPLANE_TEST_HOST_OS: hostOs };
if (freshOnly) {
  if (system) await vitest(`fresh-${hostOs}`, [FRESH], { SITEPLANE_SYSTEM_TESTS: '1', ...hostEnv }, SIDE_BY_SIDE);
} else if (systemOnly) {
  if (system) await vitest('fresh', [FRESH], { SITEPLANE_SYSTEM_TESTS: '1', ...hostEnv }, SIDE_BY_SIDE);
  await vitest('system', ['packages/server/test/system'], { SITEPLANE_SYSTEM_TESTS: '1', SITEPLANE_SKIP_FRESH: '1', ...hostEnv });
} else {
  // The pristine host first: its suites must be the first to touch it.
  if (system)
    await vitest('fresh', [FRESH], { SITEPLANE_SYSTEM_TESTS: '1', SITEPLANE_TEST_DB: 'sqlite', ...hostEnv }, SIDE_BY_SIDE);
  await vitest('sqlite', [], {
    SITEPLANE_SYSTEM_TESTS: system ? '1' : '0',
    SITEPLANE_SKIP_FRESH: '1',
    SITEPLANE_TEST_DB: 'sqlite',
    ...hostEnv,
  });
  await vitest(
    'postgres',
    [
      'packages/server/test/http',
      'packages/server/test/storage',
      'packages/server/test/jobs',
      'packages/server/test/tls',
      // Two API and two worker processes on one database (PostgreSQL only; skipped on SQLite).
      'packages/server/test/cluster',
    ],
    {
      SITEPLANE_SYSTEM_TESTS: '0',
      SITEPLANE_TEST_DB: 'postgres',
    },
  );
}

let passed = 0;
let failed = 0;
let skipped = 0;
// The failures are named again at the end, next to the totals: a CI log is often read from its tail.
const failures = [];
for (const run of runs) {
  if (!existsSync(run.out)) {
    console.error(`${run.name}: vitest wrote no report (exit ${run.code})`);
    failed += 1;
    continue;
  }
  const report = JSON.parse(readFileSync(run.out, 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + (report.numTodoTests ?? 0);
  // A file that failed to load counts as a failure even when it ran no test.
  failed += report.testResults.filter((f) => f.status === 'failed' && f.assertionResults.length === 0).length;
  if (run.code !== 0 && report.numFailedTests === 0 && report.numFailedTestSuites === 0) failed += 1;
  for (const file of report.testResults) {
    const name = file.name.slice(file.name.indexOf('packages/'));
    if (file.status === 'failed' && file.assertionResults.length === 0)
      failures.push(`${run.name}: ${name}: ${firstLine(file.message)}`);
    for (const test of file.assertionResults.filter((t) => t.status === 'failed'))
      failures.push(`${run.name}: ${name} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
  }
}
function firstLine(text) {
  return (
    String(text ?? '')
      .split('\n')
      .find((line) => line.trim() !== '') ?? ''
  );
}
stopHost();
stopDaemons();
if (leftoverCheck) {
  for (const p of leftoverProcesses()) {
    console.error(`left running by the tests: pid ${p.pid}: ${p.command}`);
    failed += 1;
  }
}
for (const failure of failures) console.error(`FAILED ${failure}`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
