import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { systemClock } from '../../src/app/clock.js';
import type { JobQueue, JobRow } from '../../src/jobs/queue.js';
import { Worker } from '../../src/jobs/worker.js';

/**
 * Issue 13 item 5 (create with the worker on, in the API's process): the worker shares its event
 * loop with the API. On SQLite every query resolves at once, so jobs whose handlers never wait on
 * I/O (dry-run) must still let the loop reach the requests between them, and while the API is
 * busy the claims are spaced.
 */
function queueOf(jobs: number) {
  let left = jobs;
  const claimedAt: number[] = [];
  const queue = {
    claim: async () => {
      if (left === 0) return null;
      left--;
      claimedAt.push(performance.now());
      return { uuid: `job-${left}`, attempts: 1, max_attempts: 3 } as unknown as JobRow;
    },
    complete: async () => true,
    heartbeat: async () => true,
  } as unknown as JobQueue;
  return { queue, claimedAt, left: () => left };
}

const quiet = pino({ level: 'silent' });

describe('the worker beside the API in one process', () => {
  it('lets the event loop reach other work between jobs that never wait on I/O', async () => {
    const { queue, left } = queueOf(2_000);
    const worker = new Worker(queue, async () => undefined, systemClock, quiet, {
      concurrency: 4,
      leaseMs: 60_000,
      pollMs: 1_000,
    });
    let leftWhenTimerRan = -1;
    const timer = new Promise<void>((resolve) =>
      setImmediate(() => {
        leftWhenTimerRan = left();
        resolve();
      }),
    );
    worker.start();
    await timer;
    await worker.stop();
    // Claimed as one chain of promise callbacks, all 2,000 jobs ran before the loop came round.
    expect(leftWhenTimerRan).toBeGreaterThan(1_900);
  });

  it('spaces its claims while the API is busy, and claims at once when it is not', async () => {
    const busy = { now: true, busy: () => busy.now };
    const { queue, claimedAt } = queueOf(1_000);
    const worker = new Worker(queue, async () => undefined, systemClock, quiet, {
      concurrency: 4,
      leaseMs: 60_000,
      pollMs: 1_000,
      apiPressure: busy,
    });
    worker.start();
    await new Promise((r) => setTimeout(r, 300));
    const whileBusy = claimedAt.length;
    // 50 ms apart: 6 or 7 claims in 300 ms, not hundreds.
    expect(whileBusy).toBeGreaterThanOrEqual(2);
    expect(whileBusy).toBeLessThanOrEqual(8);
    const gaps = claimedAt.slice(1).map((at, i) => at - (claimedAt[i] as number));
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(45);
    busy.now = false;
    await new Promise((r) => setTimeout(r, 300));
    await worker.stop();
    expect(claimedAt.length).toBe(1_000);
  });
});
