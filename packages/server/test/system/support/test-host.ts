import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SshExecutor, sshFingerprint } from '../../../src/provisioning/executors/ssh.js';

/**
 * The pristine Debian server of the system tests (scripts/test-env/test-host.sh): a debootstrap
 * minbase root in its own namespaces, reached by Siteplane over SSH at its own address. The tests
 * look at it from outside the product, as an operator with a root shell would: commands run inside
 * it through nsenter (its mount, PID, network… namespaces and its root directory), never over the
 * product's own SSH connection.
 */
export interface TestHost {
  name: string;
  os: string;
  address: string;
  port: number;
  /** The harness's own SSH key for root (authorised at start). */
  keyPath: string;
  /** PID 1 of the host's PID namespace, as this machine numbers it. */
  pid: number;
  /** The host's root directory on this machine. */
  root: string;
  umask: string;
}

const SCRIPT = resolve(import.meta.dirname, '../../../../../scripts/test-env/test-host.sh');
const STATE_ROOT = join(process.env.SITEPLANE_TEST_STATE_DIR ?? '/var/lib/siteplane-test', 'hosts');

/** The PHP each host's distribution ships (what Siteplane installs there with PHP_SOURCE=distribution). */
export function hostPhp(host: TestHost): string {
  return host.os === 'debian13' ? '8.4' : '8.2';
}

/** The shared host the suites use unless they start their own (run-tests.mjs starts it). */
export const SHARED_HOST = process.env.SITEPLANE_TEST_HOST ?? 'main';

function parseEnv(text: string): TestHost {
  const env = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^(TEST_HOST_[A-Z]+)=(.*)$/.exec(line.trim());
    if (match) env.set(match[1]!, match[2]!);
  }
  const get = (key: string) => {
    const value = env.get(`TEST_HOST_${key}`);
    if (value === undefined) throw new Error(`test-host.sh printed no TEST_HOST_${key}`);
    return value;
  };
  return {
    name: get('NAME'),
    os: get('OS'),
    address: get('ADDRESS'),
    port: Number(get('PORT')),
    keyPath: get('KEY'),
    pid: Number(get('PID')),
    root: get('ROOT'),
    umask: get('UMASK'),
  };
}

/** The running host of that name, or null. */
export function findTestHost(name = SHARED_HOST): TestHost | null {
  const envFile = join(STATE_ROOT, name, 'env');
  if (!existsSync(envFile)) return null;
  const host = parseEnv(readFileSync(envFile, 'utf8'));
  try {
    process.kill(host.pid, 0);
  } catch {
    return null;
  }
  return host;
}

/** The shared host; throws with the fix when it does not run (system tests never skip silently). */
export function requireTestHost(name = SHARED_HOST): TestHost {
  const host = findTestHost(name);
  if (!host)
    throw new Error(`test host ${name} is not running: run \`bash scripts/test-env/test-host.sh start ${name}\` as root`);
  return host;
}

export interface StartOptions {
  os?: 'debian12' | 'debian13';
  /** Picks the host's /30 (10.231.<index>.0); hosts that run at once need different ones. */
  index: number;
  umask?: string;
  /** `systemd`: the host boots its own systemd as PID 1 (an operator's machine); default sshd alone. */
  init?: 'sshd' | 'systemd';
}

/**
 * Starts a host of its own for a suite that needs a pristine one (about 5 s from the cached image;
 * a systemd host boots longer). Asynchronous, as stopping is: a test worker blocked in a child
 * process for a minute cannot answer Vitest, which then fails the run ("Timeout calling
 * onTaskUpdate", seen in CI on a loaded machine).
 */
export async function startTestHost(name: string, options: StartOptions): Promise<TestHost> {
  // Pristine means new: one of that name left running by an earlier run goes first.
  await stopTestHost(name);
  const args = ['start', name, '--index', String(options.index)];
  if (options.os) args.push('--os', options.os);
  if (options.umask) args.push('--umask', options.umask);
  if (options.init) args.push('--init', options.init);
  const result = await runHere('bash', [SCRIPT, ...args], { timeoutMs: 600_000 });
  if (result.code !== 0) throw new Error(`test-host.sh ${args.join(' ')} failed: ${result.stderr}`);
  return parseEnv(result.stdout);
}

export async function stopTestHost(name: string): Promise<void> {
  await runHere('bash', [SCRIPT, 'stop', name], { timeoutMs: 60_000 });
}

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

export interface HostRunOptions {
  input?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
}

const BASE_ENV = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', 'HOME=/root', 'LANG=C.UTF-8'];

function nsenterArgv(host: TestHost, command: string, args: readonly string[], env: Record<string, string> = {}): string[] {
  const vars = Object.entries(env).map(([k, v]) => `${k}=${v}`);
  return [
    '-t',
    String(host.pid),
    '-m',
    '-u',
    '-i',
    '-n',
    '-p',
    '-r',
    '-w',
    '--',
    'env',
    '-i',
    ...BASE_ENV,
    ...vars,
    command,
    ...args,
  ];
}

/** Runs a command as root inside the host; argv only, so hostile values arrive literally. */
export function hostRun(host: TestHost, command: string, args: readonly string[], options: HostRunOptions = {}): Promise<Ran> {
  return runHere('nsenter', nsenterArgv(host, command, args, options.env), options);
}

/** Runs a command on this machine without blocking the test's worker; never rejects: its exit code and output. */
export function runHere(
  command: string,
  args: readonly string[],
  options: Omit<HostRunOptions, 'env'> & { cwd?: string } = {},
): Promise<Ran> {
  return new Promise((done) => {
    const child = execFile(
      command,
      args,
      { timeout: options.timeoutMs ?? 60_000, maxBuffer: 16 * 1024 * 1024, cwd: options.cwd },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        done({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}

/** hostRun for checks that read as plain expressions (`expect(hostPathKind(…))`). */
export function hostRunSync(host: TestHost, command: string, args: readonly string[]): Ran {
  const result = spawnSync('nsenter', nsenterArgv(host, command, args), { encoding: 'utf8', timeout: 30_000 });
  return { code: result.status ?? 1, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

/** Where root's authorized_keys lives on this machine (the host's root directory is ours to write). */
function authorizedKeys(host: TestHost): string {
  return join(host.root, 'root/.ssh/authorized_keys');
}

/** Authorises a server's generated public key for root on the host (what an operator does on a new VPS). */
export function authorizeOnHost(host: TestHost, publicKey: string): void {
  if (!/^ssh-ed25519 [A-Za-z0-9+/=]+( \S+)?$/.test(publicKey)) throw new Error(`unexpected public key ${publicKey}`);
  const current = readFileSync(authorizedKeys(host), 'utf8');
  if (current.split('\n').includes(publicKey)) return;
  replaceAuthorizedKeys(host, `${current.replace(/\n?$/, '\n')}${publicKey}\n`);
}

export function unauthorizeOnHost(host: TestHost, publicKey: string): void {
  if (!existsSync(authorizedKeys(host))) return;
  const current = readFileSync(authorizedKeys(host), 'utf8');
  replaceAuthorizedKeys(
    host,
    current
      .split('\n')
      .filter((line) => line !== publicKey && line !== '')
      .map((line) => `${line}\n`)
      .join(''),
  );
}

function replaceAuthorizedKeys(host: TestHost, content: string): void {
  const temporary = `${authorizedKeys(host)}.${process.pid}.tmp`;
  writeFileSync(temporary, content, { mode: 0o600 });
  renameSync(temporary, authorizedKeys(host));
}

/** The host's SSH host key fingerprint (`SHA256:…`), read from its root directory. */
export function hostFingerprint(host: TestHost): string {
  const blob = readFileSync(join(host.root, 'etc/ssh/ssh_host_ed25519_key.pub'), 'utf8').trim().split(/\s+/)[1];
  if (!blob) throw new Error(`no host key in ${host.root}`);
  return sshFingerprint(Buffer.from(blob, 'base64'));
}

/** An SshExecutor to the host as root with the harness's key, its host key pinned. */
export function hostExecutor(host: TestHost): SshExecutor {
  return new SshExecutor({
    host: host.address,
    port: host.port,
    username: 'root',
    privateKey: readFileSync(host.keyPath),
    hostFingerprint: hostFingerprint(host),
  });
}
