import { execFileSync } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConnectionLost, HostKeyMismatch, normalizeFingerprint, SshExecutor } from '../../../src/provisioning/executors/ssh.js';
import { FreezableProxy } from '../support/freezable-proxy.js';
import { dropSshSession, requireTestSsh, testSsh, testSshFingerprint, testSshTarget } from '../support/ssh-server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('SSH connection: host key pinning', () => {
  beforeAll(() => requireTestSsh());

  it('computes the fingerprint exactly as ssh-keygen prints it', () => {
    const printed = execFileSync('ssh-keygen', ['-lf', testSsh.hostPublicKeyPath], { encoding: 'utf8' }).split(' ')[1];
    expect(testSshFingerprint()).toBe(printed);
    expect(normalizeFingerprint(printed!.replace('SHA256:', ''))).toBe(printed);
    expect(() => normalizeFingerprint('MD5:aa:bb')).toThrow(/not a SHA-256/);
  });

  it('without a pin, connect returns the fingerprint to pin and later connects insist on it', async () => {
    const exec = new SshExecutor(testSshTarget({ hostFingerprint: null }));
    try {
      expect(await exec.connect()).toEqual({ fingerprint: testSshFingerprint() });
      expect(exec.connection.fingerprint).toBe(testSshFingerprint());
    } finally {
      await exec.close();
    }
  });

  it('refuses a server whose key differs from the pin, before running anything', async () => {
    const wrong = `SHA256:${'A'.repeat(43)}`;
    const exec = new SshExecutor(testSshTarget({ hostFingerprint: wrong }));
    try {
      const error = await exec.run(['touch', '/tmp/siteplane-should-not-exist']).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(HostKeyMismatch);
      expect(error).toMatchObject({ expected: wrong, actual: testSshFingerprint() });
      expect(exec.connection.connectCount).toBe(0);
    } finally {
      await exec.close();
    }
  });

  it('gives up a handshake that does not complete within readyTimeout', async () => {
    const silent = createServer(() => undefined); // accepts TCP, never speaks SSH
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const exec = new SshExecutor(testSshTarget({ port, readyTimeoutMs: 500 }));
    const started = Date.now();
    try {
      await expect(exec.connect()).rejects.toThrow(/did not answer in time/);
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      await exec.close();
      silent.close();
    }
  });
});

describe('SSH connection: one connection, many channels, reconnects', () => {
  let exec: SshExecutor;
  beforeAll(() => {
    requireTestSsh();
    // Not root: on this machine root's ~/.bashrc runs `pyenv init`, which costs every root command
    // 0.3-0.5 s of CPU; that would measure the shell, not the connection.
    exec = new SshExecutor(testSshTarget({ username: testSsh.sudoUser }));
  });
  afterAll(async () => {
    await exec?.close();
  });

  it('runs 40 concurrent commands as channels of one connection, beyond sshd MaxSessions (10)', async () => {
    const before = exec.connection.connectCount;
    const started = Date.now();
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) => exec.run(['sh', '-c', 'sleep 0.3; echo "$0"', String(i)])),
    );
    expect(results.map((r) => r.stdout)).toEqual(Array.from({ length: 40 }, (_, i) => `${i}\n`));
    expect(results.every((r) => r.code === 0)).toBe(true);
    expect(exec.connection.connectCount - before).toBeLessThanOrEqual(1);
    expect(Date.now() - started).toBeLessThan(8_000); // one at a time would take 12 s or more
  });

  it('fails a command in flight when the connection drops, and reconnects for the next one', async () => {
    await exec.run(['true']);
    const before = exec.connection.connectCount;
    // timeoutMs: sshd leaves a dropped session's command running; the server-side timeout ends it.
    const inflight = exec.run(['sleep', '10'], { timeoutMs: 3_000 }).catch((err: unknown) => err);
    await sleep(300);
    await dropSshSession(exec);
    expect(await inflight).toBeInstanceOf(ConnectionLost);
    expect(await exec.run(['echo', 'again'])).toEqual({ code: 0, stdout: 'again\n', stderr: '' });
    expect(exec.connection.connectCount).toBe(before + 1);
  });

  it('keeps a detached command running through a dropped connection and collects its result', async () => {
    const marker = `/tmp/siteplane-detached-${process.pid}`;
    const before = exec.connection.connectCount;
    try {
      const id = await exec.startDetached(['sh', '-c', `sleep 2; echo done > ${marker}; echo done; exit 7`]);
      const pending = exec.waitDetached(id, { pollMs: 200 });
      await sleep(300);
      // Drops the connection the polls use: a poll fails or finds it gone, the run goes on.
      await dropSshSession(exec);
      expect(await pending).toEqual({ code: 7, stdout: 'done\n', stderr: '' });
      expect(exec.connection.connectCount).toBeGreaterThan(before);
      expect((await exec.run(['cat', marker])).stdout).toBe('done\n');
    } finally {
      await exec.run(['rm', '-f', marker]);
    }
  });
});

describe('SSH connection: keep-alive', () => {
  beforeAll(() => requireTestSsh());

  it('notices a connection that went silent and reconnects for the next command', async () => {
    const proxy = new FreezableProxy(testSsh.port);
    const port = await proxy.listen();
    const exec = new SshExecutor(
      testSshTarget({ username: testSsh.sudoUser, port, keepaliveIntervalMs: 200, keepaliveCountMax: 2 }),
    );
    try {
      await exec.run(['true']);
      const inflight = exec.run(['sleep', '30'], { timeoutMs: 3_000 }).catch((err: unknown) => err);
      await sleep(200);
      const frozenAt = Date.now();
      proxy.freeze();
      expect(await inflight).toBeInstanceOf(ConnectionLost);
      expect(Date.now() - frozenAt).toBeLessThan(3_000);
      proxy.thaw();
      expect((await exec.run(['echo', 'back'])).stdout).toBe('back\n');
      expect(exec.connection.connectCount).toBe(2);
    } finally {
      await exec.close();
      await proxy.close();
    }
  });
});
