import { spawn } from 'node:child_process';
import { constants, homedir } from 'node:os';
import { join } from 'node:path';
import type { CommandResult, Executor, RunOptions } from '../executor.js';
import { buildArgv, CLIENT_GRACE_MS, checkTimeout, isTimeoutExit, TIMEOUT_CODE, timedOut } from './command.js';
import { type DetachedOptions, DetachedRuns, type DetachedWaitOptions, type StartOptions } from './detached.js';

export interface LocalExecutorOptions {
  /** Where detached runs keep their files. Default /var/lib/siteplane/runs for root, ~/.siteplane/runs otherwise. */
  runDir?: string;
}

/**
 * Runs commands on this machine: the same argv as the ssh executor (sudo, asUser, cwd, env and
 * timeout applied by command.ts), spawned without a shell.
 */
export class LocalExecutor implements Executor {
  readonly kind = 'local' as const;
  private readonly isRoot = process.getuid?.() === 0;
  private readonly detached: DetachedRuns;

  constructor(options: LocalExecutorOptions = {}) {
    const runDir = options.runDir ?? (this.isRoot ? '/var/lib/siteplane/runs' : join(homedir(), '.siteplane/runs'));
    this.detached = new DetachedRuns(
      (argv, runOptions) => this.run(argv, runOptions),
      runDir,
      this.isRoot,
      () => false,
    );
  }

  async run(argv: readonly string[], options: RunOptions = {}): Promise<CommandResult> {
    const full = buildArgv(argv, options, this.isRoot);
    const timeoutMs = options.timeoutMs === undefined ? undefined : checkTimeout(options.timeoutMs);
    const started = Date.now();
    const result = await spawnCollect(full, options.stdin, timeoutMs === undefined ? undefined : timeoutMs + CLIENT_GRACE_MS);
    return isTimeoutExit(result.code, Date.now() - started, timeoutMs) ? timedOut(result, timeoutMs!) : result;
  }

  runDetached(argv: readonly string[], options: DetachedOptions = {}): Promise<CommandResult> {
    return this.detached.runDetached(argv, options);
  }

  startDetached(argv: readonly string[], options: StartOptions = {}): Promise<string> {
    return this.detached.start(argv, options);
  }

  waitDetached(runId: string, options: DetachedWaitOptions = {}): Promise<CommandResult> {
    return this.detached.wait(runId, options);
  }

  async close(): Promise<void> {}
}

/**
 * Spawns argv and collects its output. A missing program reports 127 like a shell would, so callers
 * see the same result as over ssh. The child leads its own process group, so the last-resort kill
 * at `killAfterMs` reaches everything it started.
 */
function spawnCollect(argv: string[], stdin: string | undefined, killAfterMs: number | undefined): Promise<CommandResult> {
  return new Promise((resolve) => {
    const [command, ...args] = argv as [string, ...string[]];
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let killed = false;
    const output = () => ({ stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') });
    const timer =
      killAfterMs === undefined
        ? undefined
        : setTimeout(() => {
            killed = true;
            try {
              process.kill(-child.pid!, 'SIGKILL');
            } catch {}
          }, killAfterMs);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const code = err.code === 'ENOENT' ? 127 : 126;
      resolve({ code, stdout: '', stderr: `${command}: ${err.code === 'ENOENT' ? 'command not found' : err.message}\n` });
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (killed) return resolve({ code: TIMEOUT_CODE, ...output() });
      const signo = signal ? (constants.signals[signal] ?? 0) : 0;
      resolve({ code: code ?? 128 + signo, ...output() });
    });
    // A command that does not read its input closes the pipe early: that is not an error.
    child.stdin.on('error', () => undefined);
    child.stdin.end(stdin ?? '');
  });
}
