import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
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
