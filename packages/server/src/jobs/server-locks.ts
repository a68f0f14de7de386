/** Named locks per server (apt/dpkg must not run twice on one server). Not re-entrant. */
export interface NamedLocks {
  withLock<T>(name: string, fn: () => Promise<T>): Promise<T>;
}

/**
 * In-process locks: enough on SQLite, where one process runs the jobs. On PostgreSQL several
 * worker processes may, and postgres-server-locks.ts adds an advisory lock across them.
 */
export class ServerLocks implements NamedLocks {
  private readonly tails = new Map<string, Promise<unknown>>();

  async withLock<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(name) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => {
      release = r;
    });
    const tail = previous.then(() => mine);
    this.tails.set(name, tail);
    await previous;
    try {
      return await fn();
    } finally {
      release();
      if (this.tails.get(name) === tail) this.tails.delete(name);
    }
  }
}
