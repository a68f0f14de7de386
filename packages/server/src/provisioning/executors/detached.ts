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
 *          command runs; `runDetached`'s start goes on waiting there up to one poll's 5 s and, when
 *          the command ended, answers with its result and removes RUN_DIR in the same round trip
 *          (most deploy and install commands are short: one round trip each instead of three). If
 *          that answer is lost, `wait` asks for the run again; a result collected in the lost
 *          answer is gone with it, and the step fails with the connection's error (a retried
 *          step runs the command again).
 *   wait   asks for RUN_DIR/exit, each question waiting on the server up to 5 s for the run to
 *          end (POLL), and answered with the output when it has; a failing poll (connection
 *          dropped) is retried, which reconnects, until the server has been unreachable for
 *          `unreachableMs`. Then removes RUN_DIR. Only the polling is interrupted by a drop, never the command.
 * A job may choose the run id (`runId`), store it before `start`, and `wait` for it again after a
 * restart or after a start whose answer was lost (`wait` then says whether it exists). Starting an
 * id that exists starts nothing while that run is alive or has finished: so a job resumed after a
 * restart, deriving the same id, waits for the command its earlier attempt started (steps/commands.ts).
 * Each run records its detached shell's pid, so a run that died without an exit status (a reboot)
 * is reported `lost` by `wait` and started afresh by the next `start` of its id.
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

export interface StartOptions extends RunOptions {
  /**
   * The run's id (letters, digits, `-`; at most 64). A job that derives it from what it runs finds
   * its run again after a restart. Default: a random one.
   */
  runId?: string;
}

export type DetachedOptions = StartOptions &
  DetachedWaitOptions & {
    /** Called when the run id was started before: this call waits for that run instead of starting one. */
    onExisting?: () => void;
  };

type Run = (argv: readonly string[], options?: RunOptions) => Promise<CommandResult>;

// Whether the run in directory $1 is still going: its detached shell wrote its pid to $1/pid, and
// that process is alive and is that shell (one of its arguments is $1: after a reboot the pid may
// belong to anything). Without procfs, a live pid has to do.
const ALIVE = [
  'alive() {',
  '  p=$(cat -- "$1/pid" 2>/dev/null) && [ -n "$p" ] && kill -0 "$p" 2>/dev/null &&',
  '    { [ ! -d /proc/self ] || tr "\\0" "\\n" <"/proc/$p/cmdline" 2>/dev/null | grep -qxF -- "$1"; }',
  '}',
].join('\n');

// look DIR LOOKS: whether the run in DIR ended, waiting on the server and looking every 0.05 s up
// to LOOKS times, so the answer comes as soon as the run ends and a poll is one round trip however
// long the run takes: no interval spent waiting on this side. Prints `running` (still going after
// the wait), `lost` (no exit status and no process: killed, or its server restarted), `missing`, or
// the exit status followed by the run's stdout and stderr, each base64 on a line of its own (one
// round trip for the result too). Alive is asked first: the shell writes the status before it
// exits, so a run that is not alive any more and has no status never will.
const LOOK = [
  'look() {',
  '  i=0',
  '  while alive "$1"; do',
  '    if [ "$i" -ge "$2" ]; then echo running; return 0; fi',
  '    sleep 0.05; i=$((i + 1))',
  '  done',
  '  if [ -f "$1/exit" ]; then cat -- "$1/exit"; base64 -w 0 -- "$1/stdout"; echo; base64 -w 0 -- "$1/stderr"; echo',
  '  elif [ -d "$1" ]; then echo lost',
  '  else echo missing; fi',
  '}',
].join('\n');

// $1 RUN_DIR, $2 how many times to look.
const POLL = [ALIVE, LOOK, 'look "$1" "$2"'].join('\n');

// $1 base dir, $2 run id, $3 the script the detached shell runs (given RUN_DIR as $1), $4 how many
// times to look for its end before answering (0: answer once it runs). No `cd`: the command starts
// in the same directory as one run by `run`. Prints `started`, or `existing` when the run id was
// started before (a resumed job) and is still running or has finished: the caller then waits for
// that run; a second copy never starts. A directory whose run died without an exit status (never
// got going, or killed with its server) is started afresh. With looks, a second line says what
// `look` found; a run that ended is collected then and there (its directory removed), so a short
// command costs one round trip instead of three (start, poll, removal).
const START = [
  'set -e',
  ALIVE,
  LOOK,
  // The runs' base is private; its parents get the mode the umask (command.ts) gives them.
  'mkdir -p -m 700 -- "$1"',
  // Runs that finished more than a day ago and were never collected (their job's process died
  // while waiting): nobody will read them now.
  'find "$1" -mindepth 1 -maxdepth 1 -type d -mmin +1440 -exec test -f "{}/exit" \\; -exec rm -rf -- "{}" + 2>/dev/null || true',
  'd="$1/$2"',
  'looks="$4"',
  // What the caller asked to know at once: with looks, whether the run ended (then its result; the
  // directory goes with it, read in this same answer).
  'collect() {',
  '  [ "$looks" -gt 0 ] || return 0',
  '  r=$(look "$d" "$looks")',
  '  printf "%s\\n" "$r"',
  '  case "$r" in running|lost|missing) ;; *) rm -rf -- "$d" ;; esac',
  '}',
  'if ! mkdir -m 700 -- "$d" 2>/dev/null; then',
  '  [ -d "$d" ] || { echo "cannot create $d" >&2; exit 1; }',
  '  if alive "$d" || [ -f "$d/exit" ]; then echo existing; collect; exit 0; fi',
  '  rm -rf -- "$d"',
  '  mkdir -m 700 -- "$d"',
  'fi',
  // The run's files (stdin with its secrets, the output) are private whatever the command's umask.
  'umask 077',
  'cat > "$d/stdin"',
  'setsid nohup sh -c "$3" siteplane-run "$d" </dev/null >/dev/null 2>&1 &',
  // Returns once the command runs: its stdin file is unlinked right after being opened.
  'i=0',
  'while [ -e "$d/stdin" ]; do',
  '  i=$((i + 1)); if [ "$i" -gt 200 ]; then echo "detached run did not start" >&2; exit 1; fi',
  '  sleep 0.05',
  'done',
  'echo started',
  'collect',
].join('\n');

/** One poll waits on the server up to 5 s (100 looks 0.05 s apart) for a run still going. */
const POLL_LOOKS = 100;

const RUN_ID = /^[A-Za-z0-9-]{1,64}$/;

/** A run id with no run directory: never started, or collected already. */
class DetachedRunMissing extends Error {
  override name = 'DetachedRunMissing';
  constructor(id: string, runDir: string) {
    super(`detached run ${id} not found in ${runDir}`);
  }
}

export class DetachedRuns {
  constructor(
    private readonly run: Run,
    private readonly runDir: string,
    private readonly isRoot: boolean,
    /** Whether a failed poll may be retried (false for errors that another try cannot fix). */
    private readonly retryable: (err: unknown) => boolean,
  ) {}

  /**
   * Starts the command detached; resolves with its run id once it runs (and its stdin file is gone).
   * When a run with this id exists (started by an earlier attempt of the same job), nothing starts:
   * `existing` is true and `wait` collects that run. With `looks`, the same round trip then waits
   * up to that many times 0.05 s for the run to end: `result` is its result when it did (its run
   * directory removed already), null when it still runs.
   */
  async begin(
    argv: readonly string[],
    options: StartOptions = {},
    looks = 0,
  ): Promise<{ id: string; existing: boolean; result: CommandResult | null }> {
    const { stdin, runId, ...rest } = options;
    const command = commandLine(buildArgv(argv, rest, this.isRoot));
    const script = `d=$1; echo $$ >"$d/pid"; ( rm -f "$d/stdin"; exec ${command} ) <"$d/stdin" >"$d/stdout" 2>"$d/stderr"; echo $? >"$d/exit.tmp"; mv "$d/exit.tmp" "$d/exit"`;
    const id = runId ?? randomUUID();
    if (!RUN_ID.test(id)) throw new Error(`invalid run id: ${id}`);
    const wrapper = ['sh', '-c', START, 'sh', this.runDir, id, script, String(looks)];
    const answer = await this.run(wrapper, { stdin: stdin ?? '' });
    if (answer.code !== 0) throw new CommandFailed(wrapper, answer);
    const [first = '', ...looked] = answer.stdout.split('\n');
    const result = looks > 0 ? this.collect(id, looked, options.timeoutMs) : null;
    return { id, existing: first.trim() === 'existing', result };
  }

  /** `begin`, for callers that need only the id. */
  async start(argv: readonly string[], options: StartOptions = {}): Promise<string> {
    return (await this.begin(argv, options)).id;
  }

  /** Waits for a detached run to finish and returns its result; removes its run directory. */
  async wait(id: string, options: DetachedWaitOptions = {}): Promise<CommandResult> {
    if (!RUN_ID.test(id)) throw new Error(`invalid run id: ${id}`);
    const dir = `${this.runDir}/${id}`;
    const pollMs = options.pollMs ?? 1_000;
    for (;;) {
      const asked = Date.now();
      const state = await this.reachable(() => this.run(['sh', '-c', POLL, 'sh', dir, String(POLL_LOOKS)]), options);
      if (state.code !== 0) throw new CommandFailed(['sh', '-c', POLL], state);
      const result = this.collect(id, state.stdout.split('\n'), options.timeoutMs);
      if (result) {
        // Best effort: a leftover run directory is harmless, a lost result is not (removed only once read).
        await this.run(['rm', '-rf', '--', dir]).catch(() => undefined);
        return result;
      }
      // The server waited already; only a poll answered at once (no wait there) waits here.
      if (Date.now() - asked < pollMs) await sleep(pollMs);
    }
  }

  /**
   * Starts the command and waits for its result. A command that ends within one poll's wait (5 s)
   * costs one round trip: the start waits for it and answers with its result. When that answer is
   * lost (the connection dropped), the run is waited for as `wait` does; a run that never started
   * fails with the error of the start.
   */
  async runDetached(argv: readonly string[], options: DetachedOptions = {}): Promise<CommandResult> {
    const { pollMs, unreachableMs, onExisting, ...runOptions } = options;
    const waitOptions = { pollMs, unreachableMs, timeoutMs: options.timeoutMs };
    const id = runOptions.runId ?? randomUUID();
    let begun: Awaited<ReturnType<DetachedRuns['begin']>>;
    try {
      begun = await this.begin(argv, { ...runOptions, runId: id }, POLL_LOOKS);
    } catch (error) {
      // The start script's own failure (its exit status) is its answer; only a lost answer is asked again.
      if (error instanceof CommandFailed || !this.retryable(error)) throw error;
      return this.wait(id, waitOptions).catch((waited: unknown) => {
        throw waited instanceof DetachedRunMissing ? error : waited;
      });
    }
    if (begun.existing) onExisting?.();
    return begun.result ?? this.wait(id, waitOptions);
  }

  /**
   * What `look` printed, as a result: null while the run goes on; `missing` and `lost` throw (a lost
   * run's directory is left in place: starting the same id again, the job's next attempt, starts it afresh).
   */
  private collect(id: string, lines: readonly string[], timeoutMs: number | undefined): CommandResult | null {
    const [answer = '', out = '', err = ''] = lines;
    if (answer === 'missing') throw new DetachedRunMissing(id, this.runDir);
    if (answer === 'lost') throw new Error(`detached run ${id} ended without an exit status (killed, or its server restarted)`);
    if (!/^\d+$/.test(answer)) return null;
    const decode = (text: string) => Buffer.from(text, 'base64').toString('utf8');
    const result = { code: Number(answer), stdout: decode(out), stderr: decode(err) };
    return isTimeoutExit(result.code, Number.POSITIVE_INFINITY, timeoutMs) ? timedOut(result, timeoutMs!) : result;
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
