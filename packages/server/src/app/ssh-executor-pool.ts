import { createHash } from 'node:crypto';
import type { CommandResult, Executor, RunOptions } from '../provisioning/executor.js';
import type { DetachedOptions } from '../provisioning/executors/detached.js';
import { SshExecutor, type SshExecutorOptions } from '../provisioning/executors/ssh.js';

/** What the pool needs of an SSH executor (an SshExecutor; a stand-in in unit tests). */
export interface PooledSsh extends Executor {
  connect(): Promise<unknown>;
  runDetached(argv: readonly string[], options?: DetachedOptions): Promise<CommandResult>;
}

interface Entry {
  identity: string;
  exec: PooledSsh;
  users: number;
  idle: NodeJS.Timeout | null;
  retired: boolean;
}

/**
 * One SSH connection per server (ARCHITECTURE §3): the jobs running on a server at once share it,
 * each command on a channel of its own, and it stays open `idleMs` after the last job let go, so
 * back-to-back jobs skip the handshake (~190 ms each over loopback under load). A server whose
 * address, user, key or pinned host key changed (re-verified) gets a new connection; the old one
 * closes once its last job is done.
 */
export class SshExecutorPool {
  private readonly entries = new Map<string, Entry>();
  /** Every connection not closed yet: the current ones and retired ones still in use. */
  private readonly live = new Set<Entry>();

  constructor(
    private readonly create: (options: SshExecutorOptions) => PooledSsh = (options) => new SshExecutor(options),
    private readonly idleMs = 60_000,
  ) {}

  /** An executor for the server; its `close()` gives it back (the connection stays for the next job). */
  async acquire(serverUuid: string, options: SshExecutorOptions): Promise<Executor> {
    const identity = identityOf(options);
    let entry = this.entries.get(serverUuid);
    if (entry && entry.identity !== identity) {
      this.retire(serverUuid, entry);
      entry = undefined;
    }
    if (!entry) {
      entry = { identity, exec: this.create(options), users: 0, idle: null, retired: false };
      this.entries.set(serverUuid, entry);
      this.live.add(entry);
    }
    entry.users++;
    if (entry.idle) clearTimeout(entry.idle);
    entry.idle = null;
    const held = entry;
    try {
      // Connected (or reconnected after a drop) now, so an unreachable server fails before any step.
      await held.exec.connect();
    } catch (error) {
      this.release(serverUuid, held);
      throw error;
    }
    return lease(held.exec, () => this.release(serverUuid, held));
  }

  /** Connections held open (siteplane_ssh_connections_open). */
  get openConnections(): number {
    return this.live.size;
  }

  /** Closes every connection (service shutdown, after the worker stopped). */
  async closeAll(): Promise<void> {
    const all = [...this.live];
    this.entries.clear();
    this.live.clear();
    await Promise.allSettled(
      all.map((entry) => {
        if (entry.idle) clearTimeout(entry.idle);
        return entry.exec.close();
      }),
    );
  }

  private retire(serverUuid: string, entry: Entry): void {
    entry.retired = true;
    this.entries.delete(serverUuid);
    if (entry.users === 0) this.dispose(serverUuid, entry);
  }

  private release(serverUuid: string, entry: Entry): void {
    entry.users--;
    if (entry.users > 0) return;
    if (entry.retired) {
      this.dispose(serverUuid, entry);
      return;
    }
    entry.idle = setTimeout(() => this.dispose(serverUuid, entry), this.idleMs);
    entry.idle.unref();
  }

  private dispose(serverUuid: string, entry: Entry): void {
    if (entry.idle) clearTimeout(entry.idle);
    if (this.entries.get(serverUuid) === entry) this.entries.delete(serverUuid);
    this.live.delete(entry);
    void entry.exec.close().catch(() => {});
  }
}

/** Everything that makes it another connection; the key only as a hash, so it is not kept twice. */
function identityOf(options: SshExecutorOptions): string {
  const key = createHash('sha256').update(options.privateKey).digest('hex');
  return JSON.stringify([options.host, options.port ?? 22, options.username, options.hostFingerprint, key]);
}

/** The shared executor seen by one job: `close()` releases it once instead of closing it. */
function lease(exec: PooledSsh, release: () => void): PooledSsh {
  let released = false;
  return {
    kind: exec.kind,
    run: (argv: readonly string[], options?: RunOptions) => exec.run(argv, options),
    runDetached: (argv: readonly string[], options?: DetachedOptions) => exec.runDetached(argv, options),
    connect: () => exec.connect(),
    close: async () => {
      if (released) return;
      released = true;
      release();
    },
  };
}
