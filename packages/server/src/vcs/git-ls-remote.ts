/**
 * Runs `git ls-remote --symref <url> HEAD refs/heads/*` and reads the default branch and every
 * branch from it. git is started with execFile (no shell, the URL is one argument after `--`),
 * with prompts disabled, a timeout, only the transports a profile may use, and ssh in batch mode,
 * so a remote that wants a password or an unknown host key fails at once instead of hanging.
 */
import { execFile } from 'node:child_process';
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
}

export const DEFAULT_GIT_TIMEOUT_MS = 20_000;

export function lsRemote(remote: GitRemote, options: LsRemoteOptions = {}): Promise<LsRemoteResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
  const args = [
    '-c',
    'credential.helper=',
    '-c',
    'core.askPass=',
    'ls-remote',
    '--symref',
    '--',
    remote.url,
    'HEAD',
    'refs/heads/*',
  ];
  return new Promise((resolve, reject) => {
    execFile(
      options.gitBinary ?? 'git',
      args,
      { env: gitEnv(), timeout: timeoutMs, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024, windowsHide: true },
      (error, stdout, stderr) => {
        if (!error) return resolve(parseLsRemote(stdout));
        const failure = error as NodeJS.ErrnoException & { killed?: boolean };
        if (failure.code === 'ENOENT') return reject(new VcsError('provider_error', 'git is not installed on this server'));
        if (failure.killed) return reject(new VcsError('unreachable', `${remote.display} did not answer within ${timeoutMs} ms`));
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
    return new VcsError('unreachable', where);
  }
  if (/not found|does not appear to be a git repository|no such repository|returned error: 404|does not exist/i.test(stderr)) {
    return new VcsError('not_found', where);
  }
  return new VcsError('provider_error', where);
}

/**
 * The server's environment minus anything that would steer git elsewhere (GIT_DIR, askpass
 * helpers), plus the settings that keep it from waiting on a human.
 */
function gitEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('GIT_') && key !== 'SSH_ASKPASS' && !key.startsWith('LC_') && key !== 'LANG') env[key] = value;
  }
  return {
    ...env,
    LC_ALL: 'C', // English messages, which classifyGitFailure reads
    GIT_TERMINAL_PROMPT: '0',
    GIT_ALLOW_PROTOCOL: 'https:http:ssh:git:file',
    // Replaces any GIT_SSH_COMMAND of the server's environment: keys come from ~/.ssh as usual.
    GIT_SSH_COMMAND: 'ssh -o BatchMode=yes -o ConnectTimeout=10',
  };
}
