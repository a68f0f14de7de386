import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CommandFailed, type CommandResult, type RunOptions } from '../executor.js';
import { commandLine } from '../shell-quote.js';
import { buildArgv, isTimeoutExit, timedOut } from './command.js';

/**
 * Detached runs: long steps (package installs, builds) that must survive a dropped connection or a
 * restart of the control plane. Design, kept small on purpose:
 *   start  one round trip: make RUN_DIR (0700), write stdin to RUN_DIR/stdin, then
 *          `setsid nohup sh -c …` runs the command in its own session with stdin from that file
 *          (unlinked as soon as it is open, so secrets do not stay on disk), stdout and stderr into
 *          RUN_DIR/stdout and RUN_DIR/stderr, and finally writes the exit status to RUN_DIR/exit
 *          (via rename, so a reader never sees half of it). The command's timeoutMs is enforced on
 *          the server by `timeout`, so it ends even when nobody is polling. Returns once the
 *          command runs.
 *   wait   polls RUN_DIR/exit; a failing poll (connection dropped) is retried, which reconnects,
 *          until the server has been unreachable for `unreachableMs`. Then reads the output and
 *          removes RUN_DIR. Only the polling is interrupted by a drop, never the command.
 * A job may choose the run id (`runId`), store it before `start`, and `wait` for it again after a
 * restart or after a start whose answer was lost (`wait` then says whether it exists).
 * RUN_DIR is `<runDir>/<id>`; runDir is /var/lib/siteplane/runs for root. A run whose waiter died
 * (the control plane was killed) is removed by a later start once it finished more than a day ago.
 */
export interface DetachedWaitOptions {
  /** Poll interval. Default 1000 ms. */
  pollMs?: number;
  /** Give up (throw) after the server has been unreachable this long. Default 10 min. */
  unreachableMs?: number;
  /** The run's timeoutMs, to report an exit by the server-side timeout as a timeout. */
  timeoutMs?: number;
}

export type DetachedOptions = RunOptions & DetachedWaitOptions;

type Run = (argv: readonly string[], options?: RunOptions) => Promise<CommandResult>;

// $1 base dir, $2 run id, $3 the script the detached shell runs (given RUN_DIR as $1). No `cd`: the
// command starts in the same directory as one run by `run`.
const START = [
  'set -e',
  'mkdir -p -- "$1"',
  // Runs that finished more than a day ago and were never collected (their job's process died
  // while waiting): nobody will read them now.
  'find "$1" -mindepth 1 -maxdepth 1 -type d -mmin +1440 -exec test -f "{}/exit" \\; -exec rm -rf -- "{}" + 2>/dev/null || true',
  'mkdir -m 700 -- "$1/$2"',
  'umask 077',
  'cat > "$1/$2/stdin"',
  'setsid nohup sh -c "$3" siteplane-run "$1/$2" </dev/null >/dev/null 2>&1 &',
  // Returns once the command runs: its stdin file is unlinked right after being opened.
  'i=0',
  'while [ -e "$1/$2/stdin" ]; do',
  '  i=$((i + 1)); if [ "$i" -gt 200 ]; then echo "detached run did not start" >&2; exit 1; fi',
  '  sleep 0.05',
  'done',
].join('\n');

// $1 RUN_DIR. Prints the exit status, `running`, or `missing`.
const POLL = 'if [ -f "$1/exit" ]; then cat -- "$1/exit"; elif [ -d "$1" ]; then echo running; else echo missing; fi';

const RUN_ID = /^[A-Za-z0-9-]{1,64}$/;

export class DetachedRuns {
  constructor(
    private readonly run: Run,
    private readonly runDir: string,
    private readonly isRoot: boolean,
    /** Whether a failed poll may be retried (false for errors that another try cannot fix). */
    private readonly retryable: (err: unknown) => boolean,
  ) {}

  /** Starts the command detached; resolves with its run id once it runs (and its stdin file is gone). */
  async start(argv: readonly string[], options: RunOptions & { runId?: string } = {}): Promise<string> {
    const { stdin, runId, ...rest } = options;
    const command = commandLine(buildArgv(argv, rest, this.isRoot));
    const script = `d=$1; ( rm -f "$d/stdin"; exec ${command} ) <"$d/stdin" >"$d/stdout" 2>"$d/stderr"; echo $? >"$d/exit.tmp"; mv "$d/exit.tmp" "$d/exit"`;
    const id = runId ?? randomUUID();
    if (!RUN_ID.test(id)) throw new Error(`invalid run id: ${id}`);
    const wrapper = ['sh', '-c', START, 'sh', this.runDir, id, script];
    const result = await this.run(wrapper, { stdin: stdin ?? '' });
    if (result.code !== 0) throw new CommandFailed(wrapper, result);
    return id;
  }

  /** Waits for a detached run to finish and returns its result; removes its run directory. */
  async wait(id: string, options: DetachedWaitOptions = {}): Promise<CommandResult> {
    if (!RUN_ID.test(id)) throw new Error(`invalid run id: ${id}`);
    const dir = `${this.runDir}/${id}`;
    const pollMs = options.pollMs ?? 1_000;
    for (;;) {
      const state = await this.reachable(() => this.run(['sh', '-c', POLL, 'sh', dir]), options);
      const answer = state.stdout.trim();
      if (state.code !== 0) throw new CommandFailed(['sh', '-c', POLL], state);
      if (answer === 'missing') throw new Error(`detached run ${id} not found in ${this.runDir}`);
      if (/^\d+$/.test(answer)) {
        const [stdout, stderr] = await this.reachable(
          () => Promise.all([this.run(['cat', '--', `${dir}/stdout`]), this.run(['cat', '--', `${dir}/stderr`])]),
          options,
        );
        // Best effort: a leftover run directory is harmless, a lost result is not.
        await this.run(['rm', '-rf', '--', dir]).catch(() => undefined);
        const result = { code: Number(answer), stdout: stdout.stdout, stderr: stderr.stdout };
        return isTimeoutExit(result.code, Number.POSITIVE_INFINITY, options.timeoutMs)
          ? timedOut(result, options.timeoutMs!)
          : result;
      }
      await sleep(pollMs);
    }
  }

  async runDetached(argv: readonly string[], options: DetachedOptions = {}): Promise<CommandResult> {
    const { pollMs, unreachableMs, ...runOptions } = options;
    const id = await this.start(argv, runOptions);
    return this.wait(id, { pollMs, unreachableMs, timeoutMs: options.timeoutMs });
  }

  /** Retries fn while the server is unreachable, up to unreachableMs since the first failure. */
  private async reachable<T>(fn: () => Promise<T>, options: DetachedWaitOptions): Promise<T> {
    let firstFailure: number | null = null;
    for (;;) {
      try {
        return await fn();
      } catch (err) {
        if (!this.retryable(err)) throw err;
        firstFailure ??= Date.now();
        if (Date.now() - firstFailure >= (options.unreachableMs ?? 600_000)) throw err;
        await sleep(options.pollMs ?? 1_000);
      }
    }
  }
}
