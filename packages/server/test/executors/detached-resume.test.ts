import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CommandResult, RunOptions } from '../../src/provisioning/executor.js';
import { DetachedRuns } from '../../src/provisioning/executors/detached.js';
import { LocalExecutor } from '../../src/provisioning/executors/local.js';

// Detached runs on this machine (real sh, no sudo needed): what a job resumed after `kill -9` of
// the control plane finds, and the modes the run's files and the command's files get.
const base = mkdtempSync(join(tmpdir(), 'siteplane-detached-'));
const runDir = join(base, 'runs');
afterAll(() => rmSync(base, { recursive: true, force: true }));

/** A command that counts its starts in `file`, then runs a little while. */
const counted = (file: string, seconds = 0.6) => ['sh', '-c', `echo start >> "$1"; sleep ${seconds}; echo done`, 'sh', file];
const starts = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean).length;

describe('detached runs resumed by run id (a restarted control plane)', () => {
  it('waits for a run of the same id that is still going instead of starting a second copy', async () => {
    const file = join(base, 'running');
    const first = new LocalExecutor({ runDir });
    await first.startDetached(counted(file), { runId: 'op-1-running' });
    // The first process "dies" here; another one resumes the job with the same id.
    const resumed = new LocalExecutor({ runDir });
    let existing = 0;
    const result = await resumed.runDetached(counted(file), { runId: 'op-1-running', pollMs: 50, onExisting: () => existing++ });
    expect(result).toEqual({ code: 0, stdout: 'done\n', stderr: '' });
    expect(existing).toBe(1);
    expect(starts(file)).toBe(1);
  });

  it('reads the result of a run that finished while nobody waited, without running it again', async () => {
    const file = join(base, 'finished');
    const exec = new LocalExecutor({ runDir });
    await exec.startDetached(counted(file, 0), { runId: 'op-1-finished' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const result = await new LocalExecutor({ runDir }).runDetached(counted(file, 0), { runId: 'op-1-finished', pollMs: 50 });
    expect(result.stdout).toBe('done\n');
    expect(starts(file)).toBe(1);
    // Collected: the id is free again (the next operation uses another id anyway).
    await expect(exec.waitDetached('op-1-finished', { pollMs: 50 })).rejects.toThrow(/not found/);
  });

  it('starts afresh a run that died without an exit status (killed with its server), and wait says it is lost', async () => {
    const file = join(base, 'lost');
    // What a reboot leaves: the run's directory, a pid that is no longer that run, no exit status.
    const dir = join(runDir, 'op-1-lost');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    writeFileSync(join(dir, 'pid'), `${process.pid}\n`);
    const exec = new LocalExecutor({ runDir });
    await expect(exec.waitDetached('op-1-lost', { pollMs: 50 })).rejects.toThrow(/ended without an exit status/);
    const result = await exec.runDetached(counted(file, 0), { runId: 'op-1-lost', pollMs: 50 });
    expect(result.stdout).toBe('done\n');
    expect(starts(file)).toBe(1);
  });

  it("runs the command under umask 022 while the run's own files stay private", async () => {
    const exec = new LocalExecutor({ runDir });
    const out = join(base, 'made-by-command');
    const id = await exec.startDetached(['sh', '-c', 'touch "$1"; umask; sleep 0.3', 'sh', out], { runId: 'op-1-modes' });
    const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);
    expect(mode(join(runDir, id))).toBe('700');
    expect(mode(join(runDir, id, 'stdout'))).toBe('600');
    const result = await exec.waitDetached(id, { pollMs: 50 });
    expect(result.stdout).toBe('0022\n');
    expect(mode(out)).toBe('644');
  });

  it('gives a plain command umask 022 whatever this process has, or the one it asks for', async () => {
    const exec = new LocalExecutor({ runDir });
    const previous = process.umask(0o077);
    try {
      expect((await exec.run(['sh', '-c', 'umask'])).stdout).toBe('0022\n');
      expect((await exec.run(['sh', '-c', 'umask'], { umask: '027' })).stdout).toBe('0027\n');
    } finally {
      process.umask(previous);
    }
  });

  it('returns stdout and stderr whole (any bytes, several lines) from the poll that sees the run end', async () => {
    const exec = new LocalExecutor({ runDir });
    const result = await exec.runDetached(
      ['sh', '-c', 'sleep 0.3; printf "ünïcode ✓\\nsecond line\\n"; printf "warn\\n\\n" >&2; exit 3'],
      { pollMs: 1000 },
    );
    expect(result).toEqual({ code: 3, stdout: 'ünïcode ✓\nsecond line\n', stderr: 'warn\n\n' });
  });
});

/**
 * Issue 11 item 8 (the platform's overhead per deploy): every deploy step runs detached, and a
 * short one costs one round trip: the start waits for it on the server and answers with its result.
 */
describe('detached runs in one round trip', () => {
  /**
   * DetachedRuns over this machine's sh, counting the round trips (one per command run); `loseAnswerOf`
   * loses that trip's answer (after it ran), `startLooks` shortens the start's wait (100 looks, 5 s).
   */
  function counted(options: { loseAnswerOf?: number; startLooks?: number } = {}) {
    const local = new LocalExecutor({ runDir });
    const trips: string[] = [];
    const run = async (argv: readonly string[], runOptions?: RunOptions): Promise<CommandResult> => {
      const start = argv[0] === 'sh' && String(argv[2]).includes('echo started');
      trips.push(start ? 'start' : argv[0] === 'rm' ? 'rm' : 'poll');
      const shortened = start && options.startLooks !== undefined ? [...argv.slice(0, -1), String(options.startLooks)] : argv;
      const result = await local.run(shortened, runOptions);
      if (trips.length === options.loseAnswerOf) throw Object.assign(new Error('connection lost'), { lost: true });
      return result;
    };
    const runs = new DetachedRuns(run, runDir, false, (err) => (err as { lost?: boolean }).lost === true);
    return { runs, trips };
  }

  it('answers a command that ends within a poll in the start itself, its run directory removed', async () => {
    const { runs, trips } = counted();
    const result = await runs.runDetached(['sh', '-c', 'echo out; echo err >&2; exit 4'], { runId: 'one-trip-short' });
    expect(result).toEqual({ code: 4, stdout: 'out\n', stderr: 'err\n' });
    expect(trips).toEqual(['start']);
    expect(() => statSync(join(runDir, 'one-trip-short'))).toThrow(/ENOENT/);
  });

  it('goes on polling a command that outlives the start’s wait, then removes it', async () => {
    const { runs, trips } = counted({ startLooks: 2 });
    const result = await runs.runDetached(['sh', '-c', 'sleep 0.5; echo late'], { runId: 'one-trip-slow', pollMs: 50 });
    expect(result.stdout).toBe('late\n');
    expect(trips[0]).toBe('start');
    expect(trips).toContain('poll');
    expect(trips.at(-1)).toBe('rm');
    expect(() => statSync(join(runDir, 'one-trip-slow'))).toThrow(/ENOENT/);
  });

  it('waits for the run when the start’s answer is lost, and fails with the start’s error when nothing started', async () => {
    const file = join(base, 'lost-answer');
    const lost = counted({ loseAnswerOf: 1, startLooks: 2 });
    const result = await lost.runs.runDetached(['sh', '-c', 'echo start >> "$1"; sleep 0.4; echo kept', 'sh', file], {
      runId: 'one-trip-lost',
      pollMs: 50,
    });
    // The run went on and was asked for again: its result, and it ran once.
    expect(result.stdout).toBe('kept\n');
    expect(starts(file)).toBe(1);
    expect(lost.trips.slice(0, 2)).toEqual(['start', 'poll']);
    const never = new DetachedRuns(
      async () => {
        throw Object.assign(new Error('unreachable before the start'), { lost: true });
      },
      runDir,
      false,
      (err) => (err as { lost?: boolean }).lost === true,
    );
    await expect(never.runDetached(['true'], { runId: 'one-trip-never', pollMs: 10, unreachableMs: 50 })).rejects.toThrow(
      /unreachable before the start/,
    );
  });
});
