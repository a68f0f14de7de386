import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectFacts } from '../../../src/provisioning/detect-facts.js';
import type { CommandResult, Executor, RunOptions } from '../../../src/provisioning/executor.js';
import { LocalExecutor } from '../../../src/provisioning/executors/local.js';
import { SshExecutor } from '../../../src/provisioning/executors/ssh.js';
import { requireTestSsh, testSsh, testSshTarget } from '../support/ssh-server.js';

/** Counts the commands (round trips) an executor is asked to run. */
function counting(inner: Executor): Executor & { calls: number } {
  const counter = {
    kind: inner.kind,
    calls: 0,
    run(argv: readonly string[], options?: RunOptions): Promise<CommandResult> {
      counter.calls++;
      return inner.run(argv, options);
    },
    close: () => inner.close(),
  };
  return counter;
}

function pm2Expected(): string | null {
  try {
    execFileSync('sh', ['-c', 'command -v pm2']);
  } catch {
    return null;
  }
  // From npm's global tree, not by running `pm2 -v`, which starts root's PM2 daemon and leaves it.
  const root = execFileSync('npm', ['root', '--global'], { encoding: 'utf8' }).trim();
  return (JSON.parse(readFileSync(join(root, 'pm2', 'package.json'), 'utf8')) as { version: string }).version;
}

/** PHP versions by their versioned binaries, read here without the product's script. */
function phpExpected(): string[] {
  const names = readdirSync('/usr/bin').concat(readdirSync('/usr/sbin'));
  const versions = names.flatMap((name) => /^php(?:-fpm)?(\d+\.\d+)$/.exec(name)?.[1] ?? []);
  return [...new Set(versions)].sort();
}

/** nginx's version as `nginx -v` prints it (on stderr), or null where nginx is not installed. */
function nginxExpected(): string | null {
  const result = spawnSync('nginx', ['-v'], { encoding: 'utf8' });
  return /nginx\/([\d.]+)/.exec(`${result.stderr ?? ''}${result.stdout ?? ''}`)?.[1] ?? null;
}

// What this machine kind has: the preinstalled databases, Node, and whatever PHP or nginx earlier
// suites had the product install here (none on a fresh machine), each read independently.
const expected = () => ({
  os: 'debian 12',
  arch: execFileSync('uname', ['-m'], { encoding: 'utf8' }).trim(),
  php: phpExpected(),
  node: execFileSync('node', ['-v'], { encoding: 'utf8' }).trim().replace(/^v/, ''),
  mysql: 'mariadb1011',
  postgresql: 'postgresql15',
  nginx: nginxExpected(),
  pm2: pm2Expected(),
});

describe('detectFacts', () => {
  const executors: Executor[] = [];
  beforeAll(() => requireTestSsh());
  afterAll(async () => {
    for (const exec of executors) await exec.close();
  });

  it.each([
    ['ssh as root', () => new SshExecutor(testSshTarget())],
    // A non-root user has no sbin directories on its PATH (nginx, mariadbd live there).
    ['ssh as a non-root user', () => new SshExecutor(testSshTarget({ username: testSsh.sudoUser }))],
    ['local', () => new LocalExecutor()],
  ])('reads this machine over %s in one round trip', async (_name, make) => {
    const inner = make();
    executors.push(inner);
    if (inner instanceof SshExecutor) await inner.connect(); // time the round trip, not the handshake
    const exec = counting(inner);
    const started = performance.now();
    const facts = await detectFacts(exec);
    const ms = Math.round(performance.now() - started);
    expect(facts).toEqual(expected());
    expect(exec.calls).toBe(1);
    console.info(`detectFacts over ${_name}: ${exec.calls} round trip, ${ms} ms`);
  });
});
