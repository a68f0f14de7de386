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
    expect(calls.at(-1)).toEqual({
      how: 'detached',
      argv: ['apt-get', 'update'],
      options: { sudo: true, timeoutMs: LONG_TIMEOUT_MS },
    });
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
