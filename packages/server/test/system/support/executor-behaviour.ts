import { expect, it } from 'vitest';
import type { CommandResult, Executor, RunOptions } from '../../../src/provisioning/executor.js';
import type { DetachedOptions } from '../../../src/provisioning/executors/detached.js';

/** An executor with detached runs (ssh and local). */
export interface DetachingExecutor extends Executor {
  runDetached(argv: readonly string[], options?: DetachedOptions): Promise<CommandResult>;
  startDetached(argv: readonly string[], options?: RunOptions): Promise<string>;
  waitDetached(runId: string, options?: { pollMs?: number }): Promise<CommandResult>;
}

/** Values that would do harm if any layer interpreted them; each must arrive as one literal argument. */
export const HOSTILE_ARGS = [
  ';',
  'a; touch /tmp/siteplane-pwned',
  '$(id)',
  '`id`',
  "it's",
  '"double"',
  "'",
  'line1\nline2',
  '\n',
  ' leading and trailing ',
  'tab\there',
  '*',
  '~',
  '$HOME',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal shell expansion is the point
  '${PATH}',
  '\\',
  '|',
  '&& echo x',
  '>out',
  '-n',
  '--',
  'ünïcødé ✓ 日本語 🚀',
  '',
  '!',
  '#comment',
  '%s',
];

/** Splits `printf '%s\0' …` output back into arguments. */
export function nulSplit(output: string): string[] {
  const parts = output.split('\0');
  expect(parts.pop()).toBe('');
  return parts;
}

/**
 * The behaviour every real executor must have, declared as `it` blocks inside the caller's describe.
 * `subject()` returns the executor under test; `runDir` is where its detached runs live.
 */
export function executorBehaviour(subject: () => DetachingExecutor, runDir: string, asUserTarget: string): void {
  it('returns stdout, stderr and the exit code', async () => {
    const result = await subject().run(['sh', '-c', 'echo out; echo err >&2; exit 3']);
    expect(result).toEqual({ code: 3, stdout: 'out\n', stderr: 'err\n' });
    expect((await subject().run(['true'])).code).toBe(0);
  });

  it('reports a program that does not exist as 127', async () => {
    const result = await subject().run(['siteplane-no-such-program', 'x']);
    expect(result.code).toBe(127);
    expect(result.stderr).toContain('siteplane-no-such-program');
  });

  it('writes stdin, then ends it', async () => {
    const text = 'secret line 1\nünïcødé ✓\n'.repeat(20_000); // ~600 KB: more than one window
    const result = await subject().run(['sha256sum'], { stdin: text });
    const { createHash } = await import('node:crypto');
    expect(result.stdout.split(' ')[0]).toBe(createHash('sha256').update(text).digest('hex'));
    // Without stdin, a reader sees end of input at once instead of hanging.
    expect((await subject().run(['cat'], { timeoutMs: 5_000 })).stdout).toBe('');
  });

  it('passes hostile argument values through literally', async () => {
    const result = await subject().run(['printf', '%s\\0', ...HOSTILE_ARGS]);
    expect(result.code).toBe(0);
    expect(nulSplit(result.stdout)).toEqual(HOSTILE_ARGS);
    expect((await subject().run(['test', '-e', '/tmp/siteplane-pwned'])).code).toBe(1);
  });

  it('applies cwd and env literally', async () => {
    const dir = `/tmp/siteplane exec 'cwd' $(id) ${process.pid}`;
    await subject().run(['mkdir', '-p', dir]);
    try {
      const value = HOSTILE_ARGS.join(' ');
      const result = await subject().run(['sh', '-c', 'pwd; printf "%s" "$SP_VALUE"'], { cwd: dir, env: { SP_VALUE: value } });
      expect(result).toEqual({ code: 0, stdout: `${dir}\n${value}`, stderr: '' });
    } finally {
      await subject().run(['rm', '-rf', dir]);
    }
    await expect(subject().run(['true'], { env: { 'A=B': 'x' } })).rejects.toThrow(/invalid environment variable name/);
  });

  it('runs as another user with asUser, with that user home, cwd and env', async () => {
    const result = await subject().run(['sh', '-c', 'id -un; echo "$HOME"; pwd; echo "$SP"'], {
      asUser: asUserTarget,
      cwd: '/tmp',
      env: { SP: 'v' },
    });
    expect(result).toEqual({ code: 0, stdout: `${asUserTarget}\n/home/${asUserTarget}\n/tmp\nv\n`, stderr: '' });
    await expect(subject().run(['id'], { asUser: '-u root' })).rejects.toThrow(/invalid user name/);
  });

  it('stops a command at its timeout with code 124 and says so', async () => {
    const marker = `sp-timeout-${process.pid}-${Date.now()}`;
    const started = Date.now();
    const result = await subject().run(['sh', '-c', `sleep 30; : ${marker}`], { timeoutMs: 1_000 });
    const elapsed = Date.now() - started;
    expect(result.code).toBe(124);
    expect(result.stderr).toContain('timed out after 1000 ms');
    expect(elapsed).toBeGreaterThanOrEqual(1_000);
    expect(elapsed).toBeLessThan(4_000);
    // The bracket keeps pgrep from matching its own command line.
    expect((await subject().run(['pgrep', '-f', marker.replace('sp-', 'sp[-]')])).code).toBe(1);
  });

  it('kills a command that ignores TERM at its timeout', async () => {
    const marker = `sp-stubborn-${process.pid}-${Date.now()}`;
    const started = Date.now();
    const result = await subject().run(['sh', '-c', `trap "" TERM; sleep 30; : ${marker}`], { timeoutMs: 500 });
    expect(result.code).toBe(124);
    expect(Date.now() - started).toBeLessThan(6_000);
    expect((await subject().run(['pgrep', '-f', marker.replace('sp-', 'sp[-]')])).code).toBe(1);
  });

  it('runs a detached command: stdin consumed and unlinked, output and code kept, run dir removed', async () => {
    const exec = subject();
    // The command waits for this file, so the run directory is seen while it runs.
    const go = `/tmp/siteplane-detached-go-${process.pid}-${Date.now()}`;
    const script = 'read line; while [ ! -e "$0" ]; do sleep 0.05; done; echo "got $line"; echo warn >&2; exit 5';
    try {
      const id = await exec.startDetached(['sh', '-c', script, go], { stdin: 'secret\n' });
      const during = await exec.run(['ls', '-A', `${runDir}/${id}`]);
      await exec.run(['touch', go]);
      // While it runs: its output and the pid of its shell (how a resumed job knows it is alive); no stdin.
      expect(during.stdout.split('\n').filter(Boolean).sort()).toEqual(['pid', 'stderr', 'stdout']);
      expect(await exec.waitDetached(id, { pollMs: 100 })).toEqual({ code: 5, stdout: 'got secret\n', stderr: 'warn\n' });
      expect((await exec.run(['test', '-e', `${runDir}/${id}`])).code).toBe(1);
    } finally {
      await exec.run(['rm', '-f', go]);
    }
  });

  it('applies options and the server-side timeout to detached commands', async () => {
    const ok = await subject().runDetached(['sh', '-c', 'id -un; pwd; echo "$SP"'], {
      asUser: asUserTarget,
      cwd: '/tmp',
      env: { SP: '$(id)' },
      pollMs: 100,
    });
    expect(ok).toEqual({ code: 0, stdout: `${asUserTarget}\n/tmp\n$(id)\n`, stderr: '' });
    const late = await subject().runDetached(['sleep', '30'], { timeoutMs: 500, pollMs: 100 });
    expect(late.code).toBe(124);
    expect(late.stderr).toContain('timed out after 500 ms');
  });
}
