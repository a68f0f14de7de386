/**
 * Named locks per server (apt/dpkg must not run twice on one server). In-process, which holds
 * because one server's jobs run in the process that claimed them; several worker processes on
 * PostgreSQL would need an advisory lock here instead.
 */
export class ServerLocks {
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
