/**
 * The wait of a live stream between reads: woken by a change notification, by the poll interval
 * (a lost notification costs at most that), or by the stream's end. `changed` is set by a
 * notification and cleared before each read, so a change committed during a read is read again
 * instead of waited for.
 */
export class ChangeWaiter {
  changed = true;
  private wake: (() => void) | null = null;

  /** For the notifier's subscription. */
  readonly notify = (): void => {
    this.changed = true;
    this.wake?.();
  };

  /** Before a read: what the read sees is everything notified so far. */
  reading(): void {
    this.changed = false;
  }

  wait(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.wake = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
      signal.addEventListener('abort', done, { once: true });
    });
  }
}
