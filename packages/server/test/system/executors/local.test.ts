import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalExecutor } from '../../../src/provisioning/executors/local.js';
import { executorBehaviour } from '../support/executor-behaviour.js';
import { testSsh } from '../support/ssh-server.js';

// The same behaviour as over ssh, on this machine (as root, like the test runner).
const runDir = `/tmp/siteplane-test-runs-${process.pid}-local`;

describe('LocalExecutor', () => {
  const exec = new LocalExecutor({ runDir });
  beforeAll(() => {
    // The asUser target comes from scripts/test-env/setup.sh.
    execFileSync('id', [testSsh.plainUser]);
  });
  afterAll(async () => {
    await exec.run(['rm', '-rf', runDir]);
  });

  executorBehaviour(() => exec, runDir, testSsh.plainUser);

  it('treats sudo as a no-op for root', async () => {
    expect((await exec.run(['id', '-u'], { sudo: true })).stdout).toBe('0\n');
  });

  it('lets another executor (after a restart) collect a detached run by its id', async () => {
    // A job derives its id from what it runs; starting the same id again (its next attempt) starts
    // no second copy: the result is the first command's.
    const id = await exec.startDetached(['sh', '-c', 'sleep 0.5; echo later'], { runId: `job-${process.pid}-step-3` });
    expect(id).toBe(`job-${process.pid}-step-3`);
    expect(await exec.startDetached(['echo', 'second copy'], { runId: id })).toBe(id);
    const restarted = new LocalExecutor({ runDir });
    expect(await restarted.waitDetached(id, { pollMs: 100 })).toEqual({ code: 0, stdout: 'later\n', stderr: '' });
    await expect(restarted.waitDetached(id, { pollMs: 100 })).rejects.toThrow(/not found/);
  });
});
