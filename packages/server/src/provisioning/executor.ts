/**
 * Executors run commands on a server (ARCHITECTURE §3): `ssh` (ssh2), `local` (this machine) and
 * `dry-run` (records what it would run). Commands are argv arrays; only `shell-quote.ts` turns them
 * into a command line, so nothing from a request reaches a shell unquoted.
 */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Written to the command's standard input (SQL, file contents, secrets). Never logged. */
  stdin?: string;
  /** Run as root through `sudo -n` when the connection's user is not root. */
  sudo?: boolean;
  /** Run as this system user (via `sudo -u`/`runuser`). */
  asUser?: string;
  cwd?: string;
  env?: Record<string, string>;
  timeoutMs?: number;
  /**
   * The command's umask (octal, `077`). Default `022` (executors/command.ts: DEFAULT_UMASK), whatever
   * the umask of the server user's session is.
   */
  umask?: string;
}

export interface Executor {
  readonly kind: 'ssh' | 'local' | 'dry-run';
  run(argv: readonly string[], options?: RunOptions): Promise<CommandResult>;
  close(): Promise<void>;
}

/** A command that exited non-zero where success was required. */
export class CommandFailed extends Error {
  constructor(
    readonly argv: readonly string[],
    readonly result: CommandResult,
  ) {
    super(`${argv[0]} exited with ${result.code}`);
    this.name = 'CommandFailed';
  }
}
