import { createHash } from 'node:crypto';
import { CommandFailed, type CommandResult, type RunOptions } from '../executor.js';
import type { DetachedOptions } from '../executors/detached.js';
import type { StepContext, StepRun } from '../step.js';

/** Root commands: the executor adds `sudo -n` only when its connection user is not root. */
export const AS_ROOT: RunOptions = { sudo: true };

/** Package installs, downloads and builds: long, but never endless (the default of SITEPLANE_LONG_COMMAND_MINUTES). */
export const LONG_TIMEOUT_MS = 20 * 60_000;

/** How long a long command may run on this service: the operator's setting, else LONG_TIMEOUT_MS. */
export function longTimeoutMs(ctx: Pick<StepContext, 'settings'>): number {
  return ctx.settings.longCommandTimeoutMs ?? LONG_TIMEOUT_MS;
}

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
  runDetached(argv: readonly string[], options?: DetachedOptions): Promise<CommandResult>;
}

/**
 * A long command (apt, npm, a build) that must succeed. Executors that can run it detached do so,
 * so it survives a dropped connection (ARCHITECTURE §3); the others run it directly. Its run id
 * comes from the operation, the step and the command, so when the control plane dies while it runs,
 * the job's next attempt waits for that run (or reads its result) instead of starting a second copy.
 */
export async function mustRunLong(
  ctx: StepContext,
  argv: readonly string[],
  options: RunOptions,
  what: string,
): Promise<CommandResult> {
  const exec = ctx.exec as Partial<DetachedCapable> & StepContext['exec'];
  const withTimeout = { timeoutMs: longTimeoutMs(ctx), ...options };
  const result =
    typeof exec.runDetached === 'function'
      ? await exec.runDetached(argv, {
          ...withTimeout,
          runId: longRunId(ctx.current, argv, options),
          onExisting: () => ctx.log(`${what}: already started by an earlier attempt of this operation; waiting for it`),
        })
      : await exec.run(argv, withTimeout);
  if (result.code !== 0) throw new StepCommandFailed(argv, result, what);
  return result;
}

/** How often each command ran so far in a run of a step (the Nth `apt-get update` of a step is its own run). */
const ordinals = new WeakMap<StepRun, Map<string, number>>();

/**
 * `<operation>-<hash>`: the same in every attempt of the operation (steps run their commands in the
 * same order each time), another in a retry (a new operation runs the command again). The hash
 * covers the step, the command, who runs it where, and how many times the step ran it before.
 * undefined (a random id) outside a job.
 */
export function longRunId(current: StepRun | undefined, argv: readonly string[], options: RunOptions): string | undefined {
  if (!current) return undefined;
  const key = JSON.stringify([current.step, argv, options.asUser ?? null, options.cwd ?? null]);
  const seen = ordinals.get(current) ?? new Map<string, number>();
  ordinals.set(current, seen);
  const ordinal = (seen.get(key) ?? 0) + 1;
  seen.set(key, ordinal);
  const hash = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
  // Run ids allow letters, digits and '-' up to 64 characters; an operation id is a UUID (36).
  const prefix = /^[A-Za-z0-9-]{1,40}$/.test(current.operation) ? current.operation : hash(current.operation).slice(0, 16);
  return `${prefix}-${hash(`${key}#${ordinal}`).slice(0, 20)}`;
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
