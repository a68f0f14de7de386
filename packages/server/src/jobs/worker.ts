import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { Clock } from '../app/clock.js';
import type { JobOutcome } from '../metrics/service-metrics.js';
import { backoffMs, type JobQueue, type JobRow } from './queue.js';

/** What a job handler may throw to ask for another attempt later instead of failing the job. */
export class TransientJobError extends Error {
  override name = 'TransientJobError';
}

/**
 * What a job handler throws when its claim was lost: the lease ran out (a stalled worker, a slow
 * database) and another claim runs the job now. Nothing of this run's outcome is recorded.
 */
export class LeaseLost extends Error {
  override name = 'LeaseLost';
  constructor(job: Pick<JobRow, 'uuid' | 'attempts'>) {
    super(`job ${job.uuid}: attempt ${job.attempts} lost its lease; another claim runs the job now`);
  }
}

/**
 * Shared by the worker and a running handler. The heartbeat sets `leaseLost` once another claim
 * took the job over, so the handler stops between steps. The handler sets `settled` once it
 * recorded the job's outcome itself, in the transaction that recorded its work's outcome; the
 * worker then records nothing more.
 */
export interface JobSignal {
  leaseLost: boolean;
  settled: boolean;
}

export type JobHandler = (job: JobRow, signal: JobSignal) => Promise<void>;

/**
 * While the API sharing this process is busy, claims are this far apart. A job holds the process's
 * one SQLite connection for each of its transactions, and jobs claimed back to back took it from
 * the requests (dry-run creates fell from ~1,600 to ~230 a second with the worker on); spaced, a
 * dry-run job (~6 ms) takes about a tenth of it. A job that waits on SSH for seconds hardly notices.
 */
const BUSY_CLAIM_GAP_MS = 50;

/**
 * Claims jobs and runs them, up to `concurrency` at once, extending each lease while it runs.
 * Woken at once by `wake()` after an in-process enqueue; polls otherwise (other processes enqueue too).
 */
export class Worker {
  /** Names the process (host and PID) that holds a job: stored as the job's `locked_by` and journaled per run. */
  readonly id = `worker-${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
  private running = 0;
  private stopped = true;
  private timer: NodeJS.Timeout | null = null;
  private readonly inFlight = new Set<Promise<void>>();
  private filling: Promise<void> = Promise.resolve();
  /** When the claim loop last ran (clock ms); a loop that stops coming round is a stalled worker. */
  private lastPass = 0;
  /** While the API is busy, no claim before this (performance.now() ms). */
  private nextClaimAt = 0;

  constructor(
    private readonly queue: JobQueue,
    private readonly handle: JobHandler,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly options: {
      concurrency: number;
      leaseMs: number;
      pollMs: number;
      /** Told of every run's outcome and duration (siteplane_job_duration_seconds). */
      observe?: (job: JobRow, outcome: JobOutcome, seconds: number) => void;
      /** Set when the worker shares its process with the API: while that is busy, claims are spaced. */
      apiPressure?: { busy(): boolean };
    },
  ) {}

  /** What the health check reads: is the claim loop coming round, and could it take a job now? */
  state(): { lastPassAt: number; freeSlots: number } {
    return { lastPassAt: this.lastPass, freeSlots: Math.max(0, this.options.concurrency - this.running) };
  }

  start(): void {
    this.lastPass = this.clock.now().getTime();
    this.stopped = false;
    this.wake();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.filling;
    await Promise.allSettled([...this.inFlight]);
  }

  wake(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    // After the I/O waiting now: with SQLite every query resolves at once, so a finished job's wake,
    // the next claim and that job's run would otherwise follow each other as promise callbacks that
    // never let the event loop reach a request (a queue of dry-run jobs held the API for 16 s).
    this.filling = this.filling.then(() => nextTurn()).then(() => this.fill());
  }

  private async fill(): Promise<void> {
    this.lastPass = this.clock.now().getTime();
    let next = this.options.pollMs;
    while (!this.stopped && this.running < this.options.concurrency) {
      const pause = this.claimPause();
      if (pause > 0) {
        next = Math.min(next, pause);
        break;
      }
      let job: JobRow | null;
      try {
        job = await this.queue.claim(this.id, this.clock.now(), this.options.leaseMs);
      } catch (error) {
        this.log.error({ err: error }, 'claiming a job failed');
        job = null;
      }
      if (!job) break;
      this.running++;
      const p = this.run(job).finally(() => {
        this.running--;
        this.inFlight.delete(p);
        this.wake();
      });
      this.inFlight.add(p);
    }
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.wake(), next);
  }

  /** How long to wait before the next claim: nothing, unless the API beside is busy (BUSY_CLAIM_GAP_MS). */
  private claimPause(): number {
    if (!this.options.apiPressure?.busy()) return 0;
    const now = performance.now();
    if (now < this.nextClaimAt) return this.nextClaimAt - now;
    this.nextClaimAt = now + BUSY_CLAIM_GAP_MS;
    return 0;
  }

  private async run(job: JobRow): Promise<void> {
    // Every line about this job carries its id and its operation's, to follow one site's work in the logs.
    const log = this.log.child({ job: job.uuid, operation: job.operation_uuid, kind: job.kind });
    const startedAt = performance.now();
    let outcome: JobOutcome = 'done';
    const signal: JobSignal = { leaseLost: false, settled: false };
    const beat = setInterval(
      async () => {
        try {
          if (!(await this.queue.heartbeat(job, this.clock.now(), this.options.leaseMs))) {
            signal.leaseLost = true;
            clearInterval(beat);
          }
        } catch (error) {
          log.warn({ err: error }, 'heartbeat failed');
        }
      },
      Math.max(50, Math.floor(this.options.leaseMs / 3)),
    );
    try {
      await this.handle(job, signal);
      if (!signal.settled) this.held(log, job, await this.queue.complete(job));
    } catch (error) {
      outcome = await this.failed(log, job, signal, error);
    } finally {
      clearInterval(beat);
      this.options.observe?.(job, outcome, (performance.now() - startedAt) / 1000);
    }
  }

  private async failed(log: Logger, job: JobRow, signal: JobSignal, error: unknown): Promise<JobOutcome> {
    const message = error instanceof Error ? error.message : String(error);
    if (error instanceof LeaseLost) {
      log.warn({ attempt: job.attempts }, message);
      return 'lease_lost';
    }
    if (error instanceof TransientJobError && job.attempts < job.max_attempts) {
      const at = new Date(this.clock.now().getTime() + backoffMs(job.attempts));
      log.warn({ attempt: job.attempts, retry_at: at.toISOString() }, message);
      this.held(log, job, await this.queue.retryLater(job, message, at));
      return 'retry';
    }
    log.error(message);
    if (!signal.settled) this.held(log, job, await this.queue.fail(job, message));
    return 'failed';
  }

  /** After recording a job's outcome: when the claim had been lost, the job was left to its new owner. */
  private held(log: Logger, job: JobRow, recorded: boolean): void {
    if (!recorded)
      log.warn(
        { attempt: job.attempts },
        `job ${job.uuid}: attempt ${job.attempts} lost its lease before its outcome was recorded; left to the claim that holds it now`,
      );
  }
}
