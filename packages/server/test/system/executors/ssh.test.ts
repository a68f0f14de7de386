import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshExecutor } from '../../../src/provisioning/executors/ssh.js';
import { executorBehaviour } from '../support/executor-behaviour.js';
import { requireTestSsh, testSsh, testSshTarget } from '../support/ssh-server.js';

// The behaviour shared with the local executor, over the test sshd, as root and as a sudo user.
const rootRunDir = `/tmp/siteplane-test-runs-${process.pid}`;

describe('SshExecutor as root', () => {
  let exec: SshExecutor;
  beforeAll(() => {
    requireTestSsh();
    exec = new SshExecutor(testSshTarget({ runDir: rootRunDir }));
  });
  afterAll(async () => {
    await exec?.run(['rm', '-rf', rootRunDir]);
    await exec?.close();
  });

  executorBehaviour(() => exec, rootRunDir, testSsh.plainUser);

  it('treats sudo as a no-op for root', async () => {
    expect((await exec.run(['id', '-u'], { sudo: true })).stdout).toBe('0\n');
  });
});

describe('SshExecutor as a non-root user with sudo', () => {
  let exec: SshExecutor;
  beforeAll(() => {
    requireTestSsh();
    // Default run dir: relative to the user's home.
    exec = new SshExecutor(testSshTarget({ username: testSsh.sudoUser }));
  });
  afterAll(async () => {
    await exec?.close();
  });

  executorBehaviour(() => exec, '.siteplane/runs', testSsh.plainUser);

  it('runs as the SSH user by default and as root with sudo (non-interactively)', async () => {
    expect((await exec.run(['id', '-un'])).stdout).toBe(`${testSsh.sudoUser}\n`);
    const root = await exec.run(['sh', '-c', 'id -un; pwd; echo "$SP"'], { sudo: true, cwd: '/root', env: { SP: '`id`' } });
    expect(root).toEqual({ code: 0, stdout: 'root\n/root\n`id`\n', stderr: '' });
    const detached = await exec.runDetached(['id', '-un'], { sudo: true, pollMs: 100 });
    expect(detached.stdout).toBe('root\n');
  });

  it('fails fast where sudo would ask for a password', async () => {
    const plain = new SshExecutor(testSshTarget({ username: testSsh.plainUser }));
    try {
      const result = await plain.run(['id'], { sudo: true, timeoutMs: 10_000 });
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/password is required/);
    } finally {
      await plain.close();
    }
  });
});
