import { describe, expect, it } from 'vitest';
import type { CommandResult, RunOptions } from '../../src/provisioning/executor.js';
import {
  DEFAULT_TIMEOUT_MS,
  LONG_TIMEOUT_MS,
  mustRun,
  mustRunLong,
  StepCommandFailed,
} from '../../src/provisioning/steps/commands.js';
import { makeContext } from './support/context.js';
import { siteOf } from './support/sites.js';

describe('running commands', () => {
  const calls: { how: string; argv: readonly string[]; options?: RunOptions }[] = [];
  const result: CommandResult = { code: 0, stdout: '', stderr: '' };
  const recorder = (how: string) => async (argv: readonly string[], options?: RunOptions) => {
    calls.push({ how, argv, options });
    return result;
  };
  const exec = {
    kind: 'ssh' as const,
    run: recorder('run'),
    runDetached: recorder('detached'),
    close: async () => {},
  };

  it('runs long commands detached where the executor can, so they survive a dropped connection', async () => {
    await mustRunLong(makeContext(exec, siteOf('php')), ['apt-get', 'update'], { sudo: true }, 'update');
    expect(calls.at(-1)).toMatchObject({
      how: 'detached',
      argv: ['apt-get', 'update'],
      // Outside a job (no ctx.current) the executor picks a random run id.
      options: { sudo: true, timeoutMs: LONG_TIMEOUT_MS, runId: undefined },
    });
  });

  it("gives long commands the operator's limit (SITEPLANE_LONG_COMMAND_MINUTES) when one is set", async () => {
    const ctx = makeContext(exec, siteOf('php'), { settings: { longCommandTimeoutMs: 45 * 60_000 } });
    await mustRunLong(ctx, ['npm', 'install'], {}, 'install');
    expect(calls.at(-1)?.options?.timeoutMs).toBe(45 * 60_000);
    // A caller's own limit still wins.
    await mustRunLong(ctx, ['npm', 'install'], { timeoutMs: 60_000 }, 'install');
    expect(calls.at(-1)?.options?.timeoutMs).toBe(60_000);
  });

  it("names a long command's run after its operation, step and place, so the job's next attempt finds it", async () => {
    const attempt = (operation: string) => {
      const ctx = makeContext(exec, siteOf('php'));
      ctx.current = { operation, step: '2 ensure nginx' };
      return ctx;
    };
    const ids = async (ctx: ReturnType<typeof attempt>) => {
      const before = calls.length;
      await mustRunLong(ctx, ['apt-get', 'update'], { sudo: true }, 'update');
      await mustRunLong(ctx, ['apt-get', 'install', 'nginx'], { sudo: true }, 'install');
      await mustRunLong(ctx, ['apt-get', 'update'], { sudo: true }, 'update again');
      return calls.slice(before).map((call) => (call.options as { runId?: string }).runId);
    };
    const op = '4f0c6a52-9a3e-4c1e-9d55-0a6f3b1f2c7d';
    const first = await ids(attempt(op));
    expect(first.every((id) => id?.startsWith(`${op}-`) && /^[A-Za-z0-9-]{1,64}$/.test(id))).toBe(true);
    // The same command twice in a step: two runs.
    expect(new Set(first).size).toBe(3);
    // Resumed (same operation, a new process): the same ids, in the same order.
    expect(await ids(attempt(op))).toEqual(first);
    // Retried (a new operation): new ids, so the commands run again.
    const retried = await ids(attempt('9b1d2c3e-0000-4000-8000-000000000001'));
    expect(retried.some((id) => first.includes(id))).toBe(false);
  });

  it('gives every other command a timeout', async () => {
    await mustRun(makeContext(exec, siteOf('php')), ['true'], {}, 'nothing');
    expect(calls.at(-1)?.options).toEqual({ timeoutMs: DEFAULT_TIMEOUT_MS });
  });

  it('fails with the end of the output in the message', async () => {
    const failing = { ...exec, run: async () => ({ code: 2, stdout: '', stderr: 'first\nsecond\nthe reason\n' }) };
    const error = await mustRun(makeContext(failing, siteOf('php')), ['x'], {}, 'do x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StepCommandFailed);
    expect((error as Error).message).toBe('do x: x exited with 2: first | second | the reason');
  });
});
