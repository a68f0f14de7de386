import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { APP_SOURCES, type SitesClient } from './harness.js';

const repoRoot = join(import.meta.dirname, '../../../../../..');

/**
 * The environment of a `siteplane serve` that a test kills and restarts on one data directory:
 * a short lease, so the restarted one takes the job over within seconds, any free port.
 */
export function killableServeEnv(dataDir: string): Record<string, string> {
  return {
    ...APP_SOURCES,
    SITEPLANE_DATA_DIR: dataDir,
    SITEPLANE_SECRET_KEY: randomBytes(32).toString('base64'),
    SITEPLANE_JOB_LEASE_MS: '2000',
    HOST: '127.0.0.1',
    PORT: '0',
    LOG_LEVEL: 'warn',
    // The tests poll every 20 ms, past any per-token limit a person's client would need.
    SITEPLANE_RATE_LIMIT: '0',
    SITEPLANE_RATE_LIMIT_ADDRESS: '0',
  };
}

/** Starts `siteplane serve` as a child process (one process: node with tsx's loader) and waits for its address. */
export async function serve(
  env: Record<string, string>,
  children: ChildProcess[],
): Promise<{ child: ChildProcess; base: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'packages/cli/src/main.ts', 'serve'], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let output = '';
  const base = await new Promise<string>((resolve, reject) => {
    // A bound, not a timing: tsx compiles the server at start, slow on a loaded 2-core machine.
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${output}`)), 120_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
  });
  return { child, base };
}

/** Polls the operation until the named step is running (or past it); returns the steps then. */
export async function waitForStep(api: SitesClient, operation: string, name: string) {
  const until = Date.now() + 60_000;
  for (;;) {
    const op = await api.operation(operation);
    const step = op.steps.find((s) => s.name === name);
    if (step && step.status !== 'pending') return op.steps;
    if (op.status === 'failed' || Date.now() > until) throw new Error(`step ${name} never ran: ${JSON.stringify(op.error)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
