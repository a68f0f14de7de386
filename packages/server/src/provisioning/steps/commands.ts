import { CommandFailed, type CommandResult, type RunOptions } from '../executor.js';
import type { StepContext } from '../step.js';

/** Root commands: the executor adds `sudo -n` only when its connection user is not root. */
export const AS_ROOT: RunOptions = { sudo: true };

/** Package installs, downloads and builds: long, but never endless. */
export const LONG_TIMEOUT_MS = 20 * 60_000;

/** Every other command: a hung one (a lock wait, a prompt) must not hold the job forever. */
export const DEFAULT_TIMEOUT_MS = 5 * 60_000;

/** A command that failed, with the end of its output in the message so the operation log explains it. */
export class StepCommandFailed extends CommandFailed {
  constructor(argv: readonly string[], result: CommandResult, what: string) {
    super(argv, result);
    const output = tail(result.stderr.trim() || result.stdout.trim());
    this.message = `${what}: ${argv[0]} exited with ${result.code}${output ? `: ${output}` : ''}`;
  }
}

/** A step cannot go on, for a reason that is not a failed command (a conflict, an unsupported case). */
export class StepError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StepError';
  }
}

function tail(text: string, lines = 5): string {
  return text.split('\n').slice(-lines).join(' | ');
}

/** Runs a command whose exit status the caller interprets itself (probes). */
export function run(ctx: StepContext, argv: readonly string[], options: RunOptions = {}): Promise<CommandResult> {
  return ctx.exec.run(argv, { timeoutMs: DEFAULT_TIMEOUT_MS, ...options });
}

/** Runs a command that must succeed. */
export async function mustRun(
  ctx: StepContext,
  argv: readonly string[],
  options: RunOptions,
  what: string,
): Promise<CommandResult> {
  const result = await run(ctx, argv, options);
  if (result.code !== 0) throw new StepCommandFailed(argv, result, what);
  return result;
}

interface DetachedCapable {
  runDetached(argv: readonly string[], options?: RunOptions): Promise<CommandResult>;
}

/**
 * A long command (apt, npm, a build) that must succeed. Executors that can run it detached do so,
 * so it survives a dropped connection (ARCHITECTURE §3); the others run it directly.
 */
export async function mustRunLong(
  ctx: StepContext,
  argv: readonly string[],
  options: RunOptions,
  what: string,
): Promise<CommandResult> {
  const exec = ctx.exec as Partial<DetachedCapable> & StepContext['exec'];
  const withTimeout = { timeoutMs: LONG_TIMEOUT_MS, ...options };
  const result =
    typeof exec.runDetached === 'function' ? await exec.runDetached(argv, withTimeout) : await exec.run(argv, withTimeout);
  if (result.code !== 0) throw new StepCommandFailed(argv, result, what);
  return result;
}

/**
 * Whether a program is on the PATH, without running it (running `pm2` would start its daemon).
 * The script is constant; the name is a positional argument. An empty answer counts as "absent",
 * so a dry-run executor (which answers nothing) shows what a bare server would get.
 */
export async function programPath(ctx: StepContext, name: string, options: RunOptions = {}): Promise<string | null> {
  const result = await run(ctx, ['sh', '-c', 'command -v -- "$1"', 'sh', name], options);
  const path = result.stdout.trim();
  return result.code === 0 && path !== '' ? path : null;
}

/** Whether the system user exists on the server (`getent passwd`, which also sees NSS users). */
export async function systemUserExists(ctx: StepContext, user: string): Promise<boolean> {
  const passwd = await run(ctx, ['getent', 'passwd', user], AS_ROOT);
  return passwd.code === 0 && passwd.stdout.trim() !== '';
}
