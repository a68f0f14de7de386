import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../app/clock.js';
import { pruneEvents } from '../storage/event-log.js';
import type { Database } from '../storage/schema.js';

/** Once an hour: a retention counted in days is never noticeably late. */
const PRUNE_INTERVAL_MS = 3_600_000;

/**
 * Keeps the change log (storage/event-log.ts) to SITEPLANE_EVENT_RETENTION_DAYS: runs in the worker
 * process, at start and then hourly. Idempotent, so several worker processes may all run it.
 */
export class EventRetention {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: { db: Kysely<Database>; clock: Clock; log: Pick<Logger, 'error'>; retentionDays: number },
    private readonly intervalMs = PRUNE_INTERVAL_MS,
  ) {}

  start(): void {
    const tick = () => {
      this.running = this.prune().catch((error: unknown) => this.deps.log.error({ err: error }, 'pruning events failed'));
    };
    tick();
    this.timer = setInterval(tick, this.intervalMs);
    this.timer.unref();
  }

  /** Deletes the events older than the retention; answers how many. */
  prune(): Promise<number> {
    const cutoff = new Date(this.deps.clock.now().getTime() - this.deps.retentionDays * 86_400_000).toISOString();
    return pruneEvents(this.deps.db, cutoff);
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }
}
