/**
 * Runs `git ls-remote --symref <url> HEAD refs/heads/*` and reads the default branch and every
 * branch from it. git is started with execFile (no shell, the URL is one argument after `--`),
 * with prompts disabled, a timeout, only the remote's own transport, and ssh in batch mode, so a
 * remote that wants a password or an unknown host key fails at once instead of hanging.
 *
 * The remote is the tenant's, the machine is the operator's: git runs with an empty HOME (no
 * ~/.gitconfig, ~/.netrc, url.insteadOf), no system config, no credential helper, no redirects
 * (curl would follow one to any address), and ssh offers no key or agent of this machine. The
 * remote's host passes the egress policy right before git runs, and git's HTTPS is pinned to the
 * addresses that passed (http.curloptResolve), so its own lookup cannot land elsewhere.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { EgressError } from '../egress/egress-error.js';
import { MAX_VCS_BODY_BYTES, tooLarge } from './body-cap.js';
import type { GitRemote } from './git-remote.js';
import { type Branch, VcsError } from './provider.js';
import { quote } from './redact.js';

export interface LsRemoteResult {
  /** Branch HEAD points to; null when the remote does not say (detached or hidden HEAD). */
  head: string | null;
  branches: Branch[];
}

export interface LsRemoteOptions {
  timeoutMs?: number;
  gitBinary?: string;
  /** The egress policy's resolving check (VcsProviderOptions.checkHost). */
  checkHost?: (host: string) => Promise<string[]>;
  /**
   * An ssh remote's key (a site's deploy key, OpenSSH PEM): offered as the only identity, from a
   * 0600 file in a directory of this process's own (0700), removed as soon as git has ended.
   */
  sshPrivateKey?: string;
}

export const DEFAULT_GIT_TIMEOUT_MS = 20_000;

export async function lsRemote(remote: GitRemote, options: LsRemoteOptions = {}): Promise<LsRemoteResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const addresses = await checkedAddresses(remote, options.checkHost);
  const args = [
    '-c',
    'credential.helper=',
    '-c',
    'core.askPass=',
    '-c',
    'http.followRedirects=false',
    ...pinned(remote, addresses),
    'ls-remote',
    '--symref',
    '--',
    remote.url,
    'HEAD',
    'refs/heads/*',
  ];
  const keyDir =
    options.sshPrivateKey !== undefined && remote.transport === 'ssh' ? await keyDirectory(options.sshPrivateKey) : null;
  try {
    return await runLsRemote(remote, args, options, timeoutMs, keyDir);
  } finally {
    if (keyDir) await rm(keyDir, { recursive: true, force: true });
  }
}

function runLsRemote(
  remote: GitRemote,
  args: string[],
  options: LsRemoteOptions,
  timeoutMs: number,
  keyDir: string | null,
): Promise<LsRemoteResult> {
  return new Promise((resolve, reject) => {
    const home = emptyHome();
    execFile(
      options.gitBinary ?? 'git',
      args,
      {
        env: gitEnv(remote, home, keyDir ? join(keyDir, 'key') : null),
        cwd: home,
        timeout: timeoutMs,
        killSignal: 'SIGKILL',
        // Node stops reading and kills git past this (ERR_CHILD_PROCESS_STDIO_MAXBUFFER), see below.
        maxBuffer: MAX_VCS_BODY_BYTES,
        windowsHide: true,
      },
      (error, stdout, stderr) => {
        if (!error) return resolve(parseLsRemote(stdout));
        const failure = error as NodeJS.ErrnoException & { killed?: boolean };
        if ((failure.code as unknown) === 'ERR_CHILD_PROCESS_STDIO_MAXBUFFER')
          return reject(tooLarge(`git ls-remote ${quote(remote.display, remote.secrets)}`, MAX_VCS_BODY_BYTES));
        if (failure.code === 'ENOENT') return reject(new VcsError('provider_error', 'git is not installed on this server'));
        if (failure.killed)
          return reject(
            new VcsError('unreachable', `${quote(remote.display, remote.secrets)} did not answer within ${timeoutMs} ms`),
          );
        reject(classifyGitFailure(String(stderr), remote));
      },
    );
  });
}

/** Lines `ref: refs/heads/main\tHEAD` (the symref) and `<sha>\t<ref>`. */
export function parseLsRemote(stdout: string): LsRemoteResult {
  let head: string | null = null;
  const branches: Branch[] = [];
  for (const line of stdout.split('\n')) {
    const [left, ref] = line.split('\t');
    if (left === undefined || ref === undefined) continue;
    if (left.startsWith('ref: ')) {
      if (ref === 'HEAD' && left.startsWith('ref: refs/heads/')) head = left.slice('ref: refs/heads/'.length);
    } else if (ref.startsWith('refs/heads/') && /^[0-9a-f]{40,64}$/.test(left)) {
      branches.push({ name: ref.slice('refs/heads/'.length), commit: left });
    }
  }
  return { head, branches };
}

/** git's stderr (in the C locale) → the kind of failure; the message keeps git's own words, redacted. */
export function classifyGitFailure(stderr: string, remote: GitRemote): VcsError {
  const said = quote(
    stderr
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('hint:'))
      .join(' '),
    remote.secrets,
    300,
  );
  const where = `git ls-remote ${quote(remote.display, remote.secrets)} failed: ${said || 'no message'}`;
  // An ssh host key this server does not know is refused like a credential (BatchMode cannot ask):
  // the fix is the operator's, adding the key to known_hosts, not a retry.
  if (
    /Authentication failed|could not read (Username|Password)|terminal prompts disabled|Permission denied \(|returned error: 40[13]|Access denied|Host key verification failed/i.test(
      stderr,
    )
  ) {
    return new VcsError('auth_failed', where);
  }
  if (
    /Could not resolve host|unable to connect|Connection refused|timed out|Network is unreachable|No route to host|Connection reset|Failed to connect|Couldn't connect|connect to host/i.test(
      stderr,
    )
  ) {
    // Not git's words: "Failed to connect to 10.1.2.3 port 443: Connection refused" over many
    // remotes would map the operator's network.
    return new VcsError(
      'unreachable',
      `git ls-remote ${quote(remote.display, remote.secrets)} failed: the remote could not be reached`,
    );
  }
  if (/not found|does not appear to be a git repository|no such repository|returned error: 404|does not exist/i.test(stderr)) {
    return new VcsError('not_found', where);
  }
  return new VcsError('provider_error', where);
}

/** The addresses the egress policy allowed for the remote's host (null without a policy). */
async function checkedAddresses(remote: GitRemote, checkHost: LsRemoteOptions['checkHost']): Promise<string[] | null> {
  if (!checkHost) return null;
  try {
    return await checkHost(remote.host);
  } catch (error) {
    if (!(error instanceof EgressError)) throw error;
    const kind = error.kind === 'target_not_allowed' ? 'target_not_allowed' : 'unreachable';
    return Promise.reject(new VcsError(kind, `${quote(remote.display, remote.secrets)}: ${error.message}`));
  }
}

/** `-c http.curloptResolve=host:port:addr,…`: curl connects to the checked addresses, not its own lookup's. */
function pinned(remote: GitRemote, addresses: string[] | null): string[] {
  if (!addresses || isIP(remote.host) || (remote.transport !== 'https' && remote.transport !== 'http')) return [];
  const list = addresses.map((address) => (isIP(address) === 6 ? `[${address}]` : address)).join(',');
  return ['-c', `http.curloptResolve=${remote.host}:${remote.port}:${list}`];
}

/** A fresh 0700 directory holding `key` (0600): the key never sits in a file another process may read. */
async function keyDirectory(privateKey: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'siteplane-key-'));
  await writeFile(join(dir, 'key'), privateKey.endsWith('\n') ? privateKey : `${privateKey}\n`, { mode: 0o600 });
  return dir;
}

let home: string | null = null;

/** An empty directory of this process's own (mode 0700): git's HOME and working directory. */
function emptyHome(): string {
  home ??= mkdtempSync(join(tmpdir(), 'siteplane-git-'));
  return home;
}

/**
 * Only what git needs of the server's environment (PATH, the CA bundle) plus the settings that
 * keep it from waiting on a human or reading anything of the operator's: no proxy, no GIT_*, no
 * SSH agent.
 */
function gitEnv(remote: GitRemote, home: string, keyFile: string | null): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const key of ['PATH', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'TMPDIR']) {
    if (process.env[key] !== undefined) env[key] = process.env[key];
  }
  return {
    ...env,
    HOME: home,
    XDG_CONFIG_HOME: home,
    GIT_CEILING_DIRECTORIES: dirname(home), // no repository above the working directory is read
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    LC_ALL: 'C', // English messages, which classifyGitFailure reads
    GIT_TERMINAL_PROMPT: '0',
    GIT_ALLOW_PROTOCOL: remote.transport,
    // -F /dev/null: no ~/.ssh/config of the server's (its IdentityFile, ProxyCommand); known_hosts
    // is still the server's, so a host key the operator trusts is accepted, an unknown one refused.
    GIT_SSH_COMMAND: sshCommand(keyFile),
    GIT_SSH_VARIANT: 'ssh',
  };
}

/**
 * ssh offering only `keyFile` (a site's deploy key), or no key at all: public-key authentication
 * off rather than `IdentityFile=/dev/null`, which ssh loads and answers with an "UNPROTECTED PRIVATE
 * KEY FILE" warning that crowded the remote's own refusal out of the error message.
 */
export function sshCommand(keyFile: string | null): string {
  return [
    'ssh -F /dev/null',
    '-o BatchMode=yes',
    '-o ConnectTimeout=10',
    '-o IdentitiesOnly=yes',
    keyFile ? `-o IdentityFile='${keyFile}'` : '-o PubkeyAuthentication=no',
    '-o IdentityAgent=none',
    '-o StrictHostKeyChecking=yes',
    '-o PasswordAuthentication=no',
    '-o KbdInteractiveAuthentication=no',
  ].join(' ');
}
