import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SshExecutorPool } from '../../../src/app/ssh-executor-pool.js';
import { SshExecutor } from '../../../src/provisioning/executors/ssh.js';
import { requireTestSsh, testSsh, testSshTarget } from '../support/ssh-server.js';

describe('one SSH connection per server across jobs (ARCHITECTURE §3), over the real sshd', () => {
  const made: SshExecutor[] = [];
  let pool: SshExecutorPool;
  beforeAll(() => {
    requireTestSsh();
    pool = new SshExecutorPool((options) => {
      const exec = new SshExecutor(options);
      made.push(exec);
      return exec;
    });
  });
  afterAll(async () => pool?.closeAll());

  it('consecutive and concurrent jobs on one server run their commands over one connection', async () => {
    const target = testSshTarget({ username: testSsh.sudoUser });
    const first = await pool.acquire('server-a', target);
    expect((await first.run(['echo', 'one'])).stdout).toBe('one\n');
    await first.close();
    const [second, third] = await Promise.all([pool.acquire('server-a', target), pool.acquire('server-a', target)]);
    const outputs = await Promise.all([second!.run(['echo', 'two']), third!.run(['id', '-un'])]);
    expect(outputs.map((o) => o.stdout)).toEqual(['two\n', `${testSsh.sudoUser}\n`]);
    await Promise.all([second!.close(), third!.close()]);
    expect(made).toHaveLength(1);
    expect(made[0]!.connection.connectCount).toBe(1);
  });

  it('closeAll ends the connection: a command on a stale executor fails instead of reconnecting', async () => {
    const exec = await pool.acquire('server-b', testSshTarget({ username: testSsh.sudoUser }));
    await pool.closeAll();
    await expect(exec.run(['true'])).rejects.toThrow(/closed/);
  });
});
