import type { CommandResult, Executor, RunOptions } from '../executor.js';
import { commandLine } from '../shell-quote.js';
import { buildArgv, CLIENT_GRACE_MS, checkTimeout, isTimeoutExit, timedOut } from './command.js';
import { type DetachedOptions, DetachedRuns, type DetachedWaitOptions, type StartOptions } from './detached.js';
import { SshConnection, type SshTarget } from './ssh-connection.js';
import { HostKeyMismatch } from './ssh-host-key.js';

export type { SshTarget } from './ssh-connection.js';
export { ConnectionLost, SshConnection } from './ssh-connection.js';
export { HostKeyMismatch, normalizeFingerprint, sshFingerprint } from './ssh-host-key.js';

export interface SshExecutorOptions extends SshTarget {
  /** Where detached runs keep their files. Default /var/lib/siteplane/runs for root, ~/.siteplane/runs otherwise. */
  runDir?: string;
}

/**
 * Runs commands on a server over its one SSH connection (ARCHITECTURE §3). The argv (with sudo,
 * asUser, cwd, env and timeout applied by command.ts) becomes a command line only through
 * shell-quote.ts; the login shell of the SSH user must be POSIX (sh, bash, dash).
 * Create one per server and share it; `close()` when the server's work is done.
 */
export class SshExecutor implements Executor {
  readonly kind = 'ssh' as const;
  readonly connection: SshConnection;
  private readonly isRoot: boolean;
  private readonly detached: DetachedRuns;

  constructor(options: SshExecutorOptions) {
    this.connection = new SshConnection(options);
    this.isRoot = options.username === 'root';
    // Relative to the SSH user's home: exec channels start there.
    const runDir = options.runDir ?? (this.isRoot ? '/var/lib/siteplane/runs' : '.siteplane/runs');
    this.detached = new DetachedRuns(
      (argv, runOptions) => this.run(argv, runOptions),
      runDir,
      this.isRoot,
      (err) => !(err instanceof HostKeyMismatch),
    );
  }

  /** Connects now (verify) and returns the host key fingerprint to pin. */
  connect(): Promise<{ fingerprint: string }> {
    return this.connection.connect();
  }

  async run(argv: readonly string[], options: RunOptions = {}): Promise<CommandResult> {
    const line = commandLine(buildArgv(argv, options, this.isRoot));
    const timeoutMs = options.timeoutMs === undefined ? undefined : checkTimeout(options.timeoutMs);
    const started = Date.now();
    const result = await this.connection.exec(line, {
      stdin: options.stdin,
      timeoutMs: timeoutMs === undefined ? undefined : timeoutMs + CLIENT_GRACE_MS,
    });
    return isTimeoutExit(result.code, Date.now() - started, timeoutMs) ? timedOut(result, timeoutMs!) : result;
  }

  /** Runs a long command so that a dropped connection interrupts only the waiting (see detached.ts). */
  runDetached(argv: readonly string[], options: DetachedOptions = {}): Promise<CommandResult> {
    return this.detached.runDetached(argv, options);
  }

  /** Starts a detached run; returns its id for `waitDetached`, also after a restart. */
  startDetached(argv: readonly string[], options: StartOptions = {}): Promise<string> {
    return this.detached.start(argv, options);
  }

  waitDetached(runId: string, options: DetachedWaitOptions = {}): Promise<CommandResult> {
    return this.detached.wait(runId, options);
  }

  close(): Promise<void> {
    return this.connection.close();
  }
}
