import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CountToShare } from '../storage/rate-limit-counts.js';
import { sendProblem } from './problem.js';

const WINDOW_MS = 60_000;
/** Past this many keys, expired windows are swept, so random tokens or addresses cannot grow the map unbounded. */
const SWEEP_AT = 50_000;

interface Window {
  /** Whole minutes since the epoch: every process counts the same minutes. */
  minute: number;
  /** Requests this process took in the minute. */
  count: number;
  /** Of those, how many were handed to the other processes (RateLimiter.unshared). */
  shared: number;
  /** Requests the other processes took in the minute, as last learnt (RateLimiter.learn). */
  others: number;
}

/**
 * Fixed windows of a calendar minute, counted in memory, one entry per kind and key; a limit of 0
 * turns the kind off. Written here rather than taken from a plugin because the key is known only
 * after authentication: a valid token is limited per token, anything else (no token, unknown or
 * revoked) per client address, so rotating made-up tokens does not buy a fresh budget.
 *
 * Several API processes on PostgreSQL share their counts (storage/rate-limit-counts.ts, about once
 * a second): a key's count is this process's plus the others' as last learnt, so a client spread
 * over the processes has one budget, give or take what it sent in the last second.
 */
export class RateLimiter {
  private readonly windows = new Map<string, Window>();

  constructor(
    private readonly perToken: number,
    private readonly perAddress: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Seconds until the key may ask again, or 0 when this request is within the limit. */
  take(kind: 'token' | 'address', key: string): number {
    const limit = kind === 'token' ? this.perToken : this.perAddress;
    if (limit <= 0) return 0;
    const now = this.now();
    const minute = Math.floor(now / WINDOW_MS);
    const id = `${kind}:${key}`;
    let w = this.windows.get(id);
    if (!w || w.minute !== minute) {
      if (this.windows.size >= SWEEP_AT) this.sweep(minute);
      w = { minute, count: 0, shared: 0, others: 0 };
      this.windows.set(id, w);
    }
    w.count++;
    return w.count + w.others > limit ? Math.max(1, Math.ceil(((minute + 1) * WINDOW_MS - now) / 1000)) : 0;
  }

  /**
   * This minute's keys, at most `max`, those with requests not yet shared first; marks those
   * requests shared. The caller adds them to the shared counts and gives back the totals (learn).
   */
  unshared(max: number): CountToShare[] {
    const minute = Math.floor(this.now() / WINDOW_MS);
    const added: CountToShare[] = [];
    const asked: CountToShare[] = [];
    for (const [key, w] of this.windows) {
      if (w.minute !== minute) continue;
      if (w.count > w.shared) {
        if (added.length >= max) continue;
        added.push({ key, minute, added: w.count - w.shared });
        w.shared = w.count;
      } else if (asked.length < max) asked.push({ key, minute, added: 0 });
    }
    return [...added, ...asked.slice(0, max - added.length)];
  }

  /** The shared total of a key's minute (every process's shared requests, these included): the others' part is kept. */
  learn(key: string, minute: number, total: number): void {
    const w = this.windows.get(key);
    if (w && w.minute === minute) w.others = Math.max(0, total - w.shared);
  }

  private sweep(minute: number): void {
    for (const [id, w] of this.windows) if (w.minute !== minute) this.windows.delete(id);
    // Every window still live: drop them all rather than grow; a limit briefly forgotten beats memory exhaustion.
    if (this.windows.size >= SWEEP_AT) this.windows.clear();
  }
}

/** Answers 429 rate_limited with Retry-After when the key is over its limit; true when it did. */
export async function refuseOverLimit(
  req: FastifyRequest,
  reply: FastifyReply,
  limiter: RateLimiter | undefined,
  kind: 'token' | 'address',
  key: string,
): Promise<boolean> {
  const wait = limiter?.take(kind, key) ?? 0;
  if (wait === 0) return false;
  reply.header('Retry-After', String(wait));
  await sendProblem(
    req,
    reply,
    'rate_limited',
    kind === 'token'
      ? `This token made more requests this minute than allowed (SITEPLANE_RATE_LIMIT); retry after ${wait} s.`
      : `This address made more unauthenticated requests this minute than allowed (SITEPLANE_RATE_LIMIT_ADDRESS); retry after ${wait} s.`,
  );
  return true;
}
