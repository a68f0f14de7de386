import type { CommandResult, Executor, RunOptions } from '../executor.js';
import { commandLine } from '../shell-quote.js';
import type { DetachedOptions } from './detached.js';

/** Which command a canned answer is for: the exact argv, a pattern on its command line, or a test. */
export type CommandMatcher = readonly string[] | RegExp | ((argv: readonly string[]) => boolean);

export interface CannedAnswer {
  match: CommandMatcher;
  result: Partial<CommandResult>;
}

export interface DryRunExecutorOptions {
  /** Receives one line per command, as it would have run. */
  onCommand: (line: string) => void;
  /** Answers for specific commands (first match wins); every other command "succeeds" with no output. */
  answers?: CannedAnswer[];
}

/**
 * Runs nothing: records each command it would run and answers code 0 with empty output, or a
 * canned answer. Used for dry-run servers and in tests. Standard input is secret (SQL, passwords,
 * file contents): only its size is recorded.
 */
export class DryRunExecutor implements Executor {
  readonly kind = 'dry-run' as const;
  private readonly answers: CannedAnswer[];

  constructor(private readonly options: DryRunExecutorOptions) {
    this.answers = [...(options.answers ?? [])];
  }

  /** Adds a canned answer (checked after those already given). */
  answer(match: CommandMatcher, result: Partial<CommandResult>): this {
    this.answers.push({ match, result });
    return this;
  }

  async run(argv: readonly string[], options: RunOptions = {}): Promise<CommandResult> {
    this.options.onCommand(describeCommand(argv, options));
    return this.reply(argv);
  }

  /** Same as run, marked as detached, so recipes can use either executor kind. */
  async runDetached(argv: readonly string[], options: DetachedOptions = {}): Promise<CommandResult> {
    // The run id and the wait's settings say nothing about what would run (and the id differs per operation).
    const { pollMs: _pollMs, unreachableMs: _unreachableMs, runId: _runId, onExisting: _onExisting, ...runOptions } = options;
    this.options.onCommand(`${describeCommand(argv, runOptions)} (detached)`);
    return this.reply(argv);
  }

  async close(): Promise<void> {}

  private reply(argv: readonly string[]): CommandResult {
    const canned = this.answers.find((answer) => matches(answer.match, argv));
    return { code: 0, stdout: '', stderr: '', ...canned?.result };
  }
}

/** `argv as a quoted command line` followed by the options as JSON, stdin replaced by its size. */
export function describeCommand(argv: readonly string[], options: RunOptions = {}): string {
  const { stdin, ...rest } = options;
  const recorded: Record<string, unknown> = { ...rest };
  if (stdin !== undefined) recorded.stdin = `<redacted ${Buffer.byteLength(stdin, 'utf8')} bytes>`;
  const line = commandLine(argv);
  return Object.keys(recorded).length === 0 ? line : `${line} ${JSON.stringify(recorded)}`;
}

function matches(matcher: CommandMatcher, argv: readonly string[]): boolean {
  if (typeof matcher === 'function') return matcher(argv);
  if (matcher instanceof RegExp) return matcher.test(commandLine(argv));
  return matcher.length === argv.length && matcher.every((arg, i) => arg === argv[i]);
}
