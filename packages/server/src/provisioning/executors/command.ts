import type { CommandResult, RunOptions } from '../executor.js';

/**
 * Turns argv + RunOptions into the full argv every executor runs, so ssh and local behave the same.
 * Everything is argv (no shell syntax): ssh turns it into a command line with shell-quote.ts, local
 * spawns it directly. Layers, outermost first:
 *   privilege  `sudo -n --` (not root, sudo) | `sudo -n -u U -H --` (not root, asUser) | `runuser -u U --` (root, asUser)
 *   cwd/env    `env -C DIR K=V …` — applied after the user switch, so DIR need only be reachable by that user
 *              and sudo's env_reset cannot drop the variables (coreutils ≥ 8.28); as another user also
 *              `-u` for each of SSH_SESSION_VARIABLES
 *   timeout    `timeout -k 2s Ns` — enforced on the server itself, so the command dies on time even if
 *              the connection to it is gone; it runs as the target user, so it may kill the command
 */

/** Exit code of a command that ran out of time (as GNU timeout reports it). */
export const TIMEOUT_CODE = 124;
/** After TERM at the deadline, `timeout` sends KILL this much later. */
export const KILL_AFTER_MS = 2_000;
/** Executors give up waiting this long after the deadline (the server-side timeout should have acted). */
export const CLIENT_GRACE_MS = KILL_AFTER_MS + 1_500;

/**
 * The umask every command runs with unless it asks for another. What the login session of the
 * server's user happens to have (027, 077 on hardened hosts) must not decide whether the files apt,
 * npm or tar create are readable by the users a stock Debian system expects to read them
 * (a global `npm install -g pm2` under 077 is root's only). Files whose privacy matters get an
 * explicit mode (install -m, chmod) instead.
 */
export const DEFAULT_UMASK = '022';
const UMASK = /^0?[0-7]{3}$/;
const UMASK_SCRIPT = (umask: string) => `umask ${umask} && exec "$@"`;

const USER_NAME = /^[a-z_][a-z0-9_.-]{0,31}\$?$/i;

/**
 * Debian's bash, started with SSH_CLIENT or SSH2_CLIENT set, reads /etc/bash.bashrc and ~/.bashrc
 * even for `bash -c` (its SSH_SOURCE_BASHRC). runuser keeps sshd's environment, so every `bash -c`
 * Siteplane runs as a site user (a hook, the release export, go-live) would run the user's own
 * ~/.bashrc first: one that exits failed every deploy at its fetch (deploy-steps.test.ts plants one),
 * what one prints lands in output Siteplane reads, and under `set -u` the stock bash.bashrc fails
 * on PS1. SSH_CONNECTION goes too: the user's PM2 daemon, started by such a command, hands its
 * environment to every app, which learnt Siteplane's address and port from it. Commands run as
 * another user go without them (sudo's env_reset drops them anyway); root's rc files are root's.
 */
const SSH_SESSION_VARIABLES = ['SSH_CLIENT', 'SSH2_CLIENT', 'SSH_CONNECTION'];
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export function buildArgv(argv: readonly string[], options: RunOptions, isRoot: boolean): string[] {
  if (argv.length === 0) throw new Error('empty command');
  for (const arg of argv) if (arg.includes('\0')) throw new Error('argument contains NUL');

  const inner: string[] = [];
  const env = Object.entries(options.env ?? {});
  const unset = options.asUser !== undefined ? SSH_SESSION_VARIABLES : [];
  if (options.cwd !== undefined || env.length > 0 || unset.length > 0) {
    inner.push('env');
    for (const name of unset) inner.push('-u', name);
    if (options.cwd !== undefined) {
      if (options.cwd === '' || options.cwd.includes('\0')) throw new Error('invalid cwd');
      inner.push('-C', options.cwd);
    }
    for (const [name, value] of env) {
      if (!ENV_NAME.test(name)) throw new Error(`invalid environment variable name: ${JSON.stringify(name)}`);
      if (value.includes('\0')) throw new Error(`environment variable ${name} contains NUL`);
      inner.push(`${name}=${value}`);
    }
  }
  if (options.timeoutMs !== undefined)
    inner.push('timeout', '-k', seconds(KILL_AFTER_MS), seconds(checkTimeout(options.timeoutMs)));
  // `env` would read a first word containing '=' as another assignment.
  if (inner[0] === 'env' && argv[0]?.includes('=')) throw new Error('command name contains "="');
  inner.push(...argv);

  const umask = options.umask ?? DEFAULT_UMASK;
  if (!UMASK.test(umask)) throw new Error(`invalid umask: ${JSON.stringify(umask)}`);
  inner.unshift('sh', '-c', UMASK_SCRIPT(umask), 'sh');

  if (options.asUser !== undefined) {
    if (!USER_NAME.test(options.asUser)) throw new Error(`invalid user name: ${JSON.stringify(options.asUser)}`);
    return isRoot
      ? ['runuser', '-u', options.asUser, '--', ...inner]
      : ['sudo', '-n', '-u', options.asUser, '-H', '--', ...inner];
  }
  if (options.sudo && !isRoot) return ['sudo', '-n', '--', ...inner];
  return inner;
}

export function checkTimeout(ms: number): number {
  if (!Number.isFinite(ms) || ms <= 0) throw new Error(`invalid timeoutMs: ${ms}`);
  return Math.ceil(ms);
}

function seconds(ms: number): string {
  return `${ms / 1000}s`;
}

/**
 * The result of a command that ran past its deadline: code 124 whether `timeout` sent TERM (124),
 * had to KILL (137) or the executor gave up waiting, with a line that says so at the end of stderr.
 */
export function timedOut(result: Omit<CommandResult, 'code'>, timeoutMs: number): CommandResult {
  const sep = result.stderr === '' || result.stderr.endsWith('\n') ? '' : '\n';
  return { ...result, code: TIMEOUT_CODE, stderr: `${result.stderr}${sep}siteplane: command timed out after ${timeoutMs} ms\n` };
}

/** Whether a finished command's code means the server-side `timeout` stopped it. */
export function isTimeoutExit(code: number, elapsedMs: number, timeoutMs: number | undefined): boolean {
  return timeoutMs !== undefined && elapsedMs >= timeoutMs && (code === TIMEOUT_CODE || code === 128 + 9);
}
