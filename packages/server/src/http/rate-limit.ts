import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from './problem.js';

const WINDOW_MS = 60_000;
/** Past this many keys, expired windows are swept, so random tokens or addresses cannot grow the map unbounded. */
const SWEEP_AT = 50_000;

/**
 * Fixed one-minute windows counted in memory, one map per kind of key. In-process is enough for a
 * single `siteplane serve`; a limit of 0 turns the kind off. Written here rather than taken from a
 * plugin because the key is known only after authentication: a valid token is limited per token,
 * anything else (no token, unknown or revoked) per client address, so rotating made-up tokens does
 * not buy a fresh budget.
 */
export class RateLimiter {
  private readonly windows = new Map<string, { count: number; resetAt: number }>();

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
    const id = `${kind}:${key}`;
    let w = this.windows.get(id);
    if (!w || w.resetAt <= now) {
      if (this.windows.size >= SWEEP_AT) this.sweep(now);
      w = { count: 0, resetAt: now + WINDOW_MS };
      this.windows.set(id, w);
    }
    w.count++;
    return w.count > limit ? Math.max(1, Math.ceil((w.resetAt - now) / 1000)) : 0;
  }

  private sweep(now: number): void {
    for (const [id, w] of this.windows) if (w.resetAt <= now) this.windows.delete(id);
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
