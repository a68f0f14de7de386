import type { CommandResult, RunOptions } from '../executor.js';
import type { DetachedOptions } from '../executors/detached.js';
import type { StepContext } from '../step.js';
import { longRunId, longTimeoutMs, StepCommandFailed } from '../steps/commands.js';

interface DetachedCapable {
  runDetached(argv: readonly string[], options?: DetachedOptions): Promise<CommandResult>;
}

/**
 * As commands.ts `mustRunLong` (detached, the same run ids, so a resumed job waits for the run its
 * earlier attempt started). Each poll waits on the server until the run ends (executors/detached.ts),
 * so a deploy's many short commands are answered as soon as they finish; pollMs is only the pause
 * after a poll that came back at once. Returns the result whatever the exit code.
 */
export function runLong(ctx: StepContext, argv: readonly string[], options: RunOptions, what: string): Promise<CommandResult> {
  const exec = ctx.exec as Partial<DetachedCapable> & StepContext['exec'];
  const withTimeout = { timeoutMs: longTimeoutMs(ctx), ...options };
  if (typeof exec.runDetached !== 'function') return exec.run(argv, withTimeout);
  return exec.runDetached(argv, {
    ...withTimeout,
    runId: longRunId(ctx.current, argv, options),
    pollMs: 250,
    onExisting: () => ctx.log(`${what}: already started by an earlier attempt of this operation; waiting for it`),
  });
}

export async function mustRunLong(
  ctx: StepContext,
  argv: readonly string[],
  options: RunOptions,
  what: string,
): Promise<CommandResult> {
  const result = await runLong(ctx, argv, options, what);
  if (result.code !== 0) throw new StepCommandFailed(argv, result, what);
  return result;
}
