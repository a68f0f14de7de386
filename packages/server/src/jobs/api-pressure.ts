import { performance } from 'node:perf_hooks';

/** The API's load is measured over windows this long (ms). */
const WINDOW_MS = 100;
/** Busy takes at least this many requests a millisecond (100 a second): a client polling a site's status is not load. */
const BUSY_REQUESTS_PER_MS = 0.1;
/** …and the event loop running code for at least this share of the window. */
const SATURATED = 0.9;

/**
 * Whether the API in this process is held back by its own event loop: in the last window it
 * received requests at BUSY_REQUESTS_PER_MS or more and its loop ran code SATURATED of the time.
 * A worker sharing the process with the API then spaces its claims (worker.ts, BUSY_CLAIM_GAP_MS),
 * so answers come first; a busy API slows the jobs, never stops them.
 */
export class ApiPressure {
  private requests = 0;
  private sample = performance.eventLoopUtilization();
  private sampledAt = performance.now();
  private isBusy = false;

  /** Called for every request the API's server receives: a count, nothing more. */
  requestArrived(): void {
    this.requests++;
  }

  busy(): boolean {
    const now = performance.now();
    const elapsed = now - this.sampledAt;
    if (elapsed >= WINDOW_MS) {
      const next = performance.eventLoopUtilization();
      const utilization = performance.eventLoopUtilization(next, this.sample).utilization;
      this.isBusy = this.requests / elapsed >= BUSY_REQUESTS_PER_MS && utilization >= SATURATED;
      this.requests = 0;
      this.sample = next;
      this.sampledAt = now;
    }
    return this.isBusy;
  }
}
