import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { pruneRateLimitCounts, shareRateLimitCounts } from '../storage/rate-limit-counts.js';
import type { Database } from '../storage/schema.js';
import type { RateLimiter } from './rate-limit.js';

/** Keys shared a round at most: a flood of made-up addresses is shared over several seconds, not in one statement. */
const MAX_KEYS = 2_000;

export interface RateLimitSharing {
  start(): void;
  /** One round now (tests; the timer's rounds never overlap with it). */
  sync(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Several API processes on one PostgreSQL: each second this process adds what its limiter counted
 * to the shared counts and learns the others' (RateLimiter.unshared and learn), and once a minute
 * removes the minutes that are over. A round that fails (the database away) is logged once until
 * one succeeds; its requests are then not seen by the other processes, each still limiting alone.
 */
export function rateLimitSharing(
  limiter: RateLimiter,
  db: Kysely<Database>,
  logger: Logger,
  now: () => number,
  periodMs = 1_000,
): RateLimitSharing {
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  let prunedBefore = 0;
  let failing = false;
  let pending = 0;

  const round = async () => {
    try {
      const counts = limiter.unshared(MAX_KEYS);
      for (const total of await shareRateLimitCounts(db, counts)) limiter.learn(total.key, total.minute, total.count);
      const minute = Math.floor(now() / 60_000);
      if (minute > prunedBefore) {
        await pruneRateLimitCounts(db, minute - 1);
        prunedBefore = minute;
      }
      if (failing) logger.info('rate-limit counts are shared with the other processes again');
      failing = false;
    } catch (error) {
      if (!failing) logger.warn({ err: error }, 'sharing rate-limit counts failed: each process limits alone until it works');
      failing = true;
    }
  };
  const sync = () => {
    pending++;
    running = running.then(round).finally(() => {
      pending--;
    });
    return running;
  };
  return {
    start() {
      // A round still going (a slow database) is not queued behind: the next tick shares what it missed.
      timer ??= setInterval(() => {
        if (pending === 0) void sync();
      }, periodMs);
      timer.unref();
    },
    sync,
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await running;
    },
  };
}
