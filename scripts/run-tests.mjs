#!/usr/bin/env node
// Runs every test: the whole suite on SQLite (with the system tests when this is root on a machine
// where scripts/test-env can install and start sshd, nginx, PHP-FPM and Pebble), then the storage,
// queue and HTTP suites again on PostgreSQL. Ends with the line `N passed, N failed`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';

const args = new Set(process.argv.slice(2));
const isRoot = process.getuid?.() === 0;
const wantSystem = !args.has('--no-system') && process.env.SITEPLANE_SYSTEM_TESTS !== '0';
const systemOnly = args.has('--system-only');
mkdirSync('.test-output', { recursive: true });

function sh(cmd, argv, env = {}) {
  const r = spawnSync(cmd, argv, { stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status ?? 1;
}

let system = false;
if (wantSystem && isRoot) {
  for (const script of ['scripts/test-env/setup.sh', 'scripts/test-env/pebble.sh']) {
    if (!existsSync(script)) continue;
    if (sh('bash', [script]) !== 0) {
      console.error(`${script} failed: the system tests cannot run`);
      process.exit(1);
    }
  }
  system = true;
} else if (wantSystem) {
  console.log('Not root: the system tests (real sshd, nginx, PHP-FPM, Pebble) are skipped. Run as root to include them.');
}

const runs = [];
const vitest = (name, paths, env) => {
  const out = `.test-output/${name}.json`;
  const code = sh('npx', ['vitest', 'run', ...paths, '--reporter=default', '--reporter=json', `--outputFile.json=${out}`], env);
  runs.push({ name, out, code });
};

if (systemOnly) {
  vitest('system', ['packages/server/test/system'], { SITEPLANE_SYSTEM_TESTS: '1' });
} else {
  vitest('sqlite', [], { SITEPLANE_SYSTEM_TESTS: system ? '1' : '0', SITEPLANE_TEST_DB: 'sqlite' });
  vitest(
    'postgres',
    ['packages/server/test/http', 'packages/server/test/storage', 'packages/server/test/jobs', 'packages/server/test/tls'],
    {
      SITEPLANE_SYSTEM_TESTS: '0',
      SITEPLANE_TEST_DB: 'postgres',
    },
  );
}

let passed = 0;
let failed = 0;
let skipped = 0;
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
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
