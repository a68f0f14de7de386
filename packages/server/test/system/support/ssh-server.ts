import { existsSync, readFileSync } from 'node:fs';
import type { Executor } from '../../../src/provisioning/executor.js';
import { type SshExecutorOptions, sshFingerprint } from '../../../src/provisioning/executors/ssh.js';

/**
 * The test sshd that scripts/test-env/setup.sh starts: 127.0.0.1:2222, its own host key, one client
 * key accepted for every user. Users: root, `spdeploy` (passwordless sudo), `spsite` (no sudo).
 */
const stateDir = process.env.SITEPLANE_TEST_STATE_DIR ?? '/var/lib/siteplane-test';

export const testSsh = {
  host: '127.0.0.1',
  port: Number(process.env.SITEPLANE_TEST_SSH_PORT ?? 2222),
  username: 'root',
  /** A non-root user with passwordless sudo. */
  sudoUser: 'spdeploy',
  /** A non-root user without sudo, also a target for asUser. */
  plainUser: 'spsite',
  privateKeyPath: `${stateDir}/ssh/id_ed25519`,
  hostPublicKeyPath: `${stateDir}/ssh/ssh_host_ed25519_key.pub`,
  pidFile: `${stateDir}/ssh/sshd.pid`,
} as const;

/** The test sshd's host key fingerprint (`SHA256:…`), computed from its public key file. */
export function testSshFingerprint(): string {
  const blob = readFileSync(testSsh.hostPublicKeyPath, 'utf8').trim().split(/\s+/)[1];
  if (!blob) throw new Error(`no key in ${testSsh.hostPublicKeyPath}`);
  return sshFingerprint(Buffer.from(blob, 'base64'));
}

/** Options for an SshExecutor reaching the test sshd (as root, pinned), with overrides. */
export function testSshTarget(overrides: Partial<SshExecutorOptions> = {}): SshExecutorOptions {
  return {
    host: testSsh.host,
    port: testSsh.port,
    username: testSsh.username,
    privateKey: readFileSync(testSsh.privateKeyPath),
    hostFingerprint: testSshFingerprint(),
    ...overrides,
  };
}

/** Throws with the fix when the test sshd is not running (system tests must not silently skip). */
export function requireTestSsh(): void {
  const pid = existsSync(testSsh.pidFile) ? Number(readFileSync(testSsh.pidFile, 'utf8').trim()) : 0;
  let alive = false;
  try {
    alive = pid > 0 && process.kill(pid, 0);
  } catch {}
  if (!alive) throw new Error('test sshd is not running: run `bash scripts/test-env/setup.sh` as root first');
}

/**
 * PID of the sshd process serving the executor's connection: the nearest `sshd` ancestor of a
 * command run over it. Killing it drops that connection only.
 */
export async function sshSessionPid(exec: Executor): Promise<number> {
  const script = [
    'p=$$',
    'while [ "$p" -gt 1 ]; do',
    '  if [ "$(cat /proc/$p/comm)" = sshd ]; then echo "$p"; exit 0; fi',
    "  p=$(sed 's/^.*) //' /proc/$p/stat | cut -d' ' -f2)",
    'done',
    'exit 1',
  ].join('\n');
  const result = await exec.run(['sh', '-c', script]);
  const pid = Number(result.stdout.trim());
  if (result.code !== 0 || !(pid > 1)) throw new Error(`no sshd ancestor found: ${result.stderr}`);
  const listener = Number(readFileSync(testSsh.pidFile, 'utf8').trim());
  if (pid === listener) throw new Error('refusing to kill the sshd listener');
  return pid;
}

/** Drops the executor's connection the hard way: SIGKILL to the sshd process serving it. */
export async function dropSshSession(exec: Executor): Promise<number> {
  const pid = await sshSessionPid(exec);
  process.kill(pid, 'SIGKILL');
  return pid;
}
