import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { rateLimitSharing } from '../../src/http/rate-limit-sharing.js';
import type { Database } from '../../src/storage/schema.js';
import { startTestService, TEST_DB, type TestService } from '../support/test-service.js';

const MINUTE = 60_000;

describe('RateLimiter: calendar minutes, and what it shares with other processes (spec §8 "Rate limits: not shown"; ARCHITECTURE §2 "Errors")', () => {
  it('counts a key in the calendar minute and says when the next one starts', () => {
    let now = 10 * MINUTE + 45_000;
    const limiter = new RateLimiter(2, 0, () => now);
    expect([limiter.take('token', 't'), limiter.take('token', 't'), limiter.take('token', 't')]).toEqual([0, 0, 15]);
    now = 11 * MINUTE;
    expect(limiter.take('token', 't')).toBe(0);
    expect(limiter.take('address', 'a')).toBe(0);
  });

  it('hands over each request once, keys only asked about after, and keeps what the others took', () => {
    const now = 20 * MINUTE;
    const limiter = new RateLimiter(10, 0, () => now);
    for (let i = 0; i < 4; i++) limiter.take('token', 'a');
    limiter.take('token', 'b');
    expect(limiter.unshared(10)).toEqual([
      { key: 'token:a', minute: 20, added: 4 },
      { key: 'token:b', minute: 20, added: 1 },
    ]);
    limiter.take('token', 'b');
    expect(limiter.unshared(10)).toEqual([
      { key: 'token:b', minute: 20, added: 1 },
      { key: 'token:a', minute: 20, added: 0 },
    ]);
    expect(limiter.unshared(1)).toEqual([{ key: 'token:a', minute: 20, added: 0 }]);
    // Another process took 5 of a's: 4 of ours shared + 5 = 9; one more is the 10th, the next is over.
    limiter.learn('token:a', 20, 9);
    expect(limiter.take('token', 'a')).toBe(0);
    expect(limiter.take('token', 'a')).toBeGreaterThan(0);
    // A total of another minute is not this one's.
    limiter.learn('token:b', 19, 100);
    expect(limiter.take('token', 'b')).toBe(0);
  });
});

/**
 * Several API processes on one PostgreSQL: two services on one database, each with its own limiter,
 * share their counts (rounds forced here with sync(), as each second's timer runs them), so a token
 * spread over both has one budget.
 */
describe.skipIf(TEST_DB !== 'postgres')(
  'rate limits shared by two API processes (PostgreSQL; spec §8, ARCHITECTURE §2 "Errors")',
  () => {
    const limits = { SITEPLANE_RATE_LIMIT: '10', SITEPLANE_RATE_LIMIT_ADDRESS: '3' };
    // Both processes' clocks held in the middle of one minute, so every request below counts in it.
    const midMinute = new Date(Math.floor(Date.now() / MINUTE) * MINUTE + 30_000);
    const clock = { now: () => midMinute };
    let a: TestService;
    let b: TestService;
    beforeAll(async () => {
      a = await startTestService({ env: limits, clock });
      b = await startTestService({ env: limits, sameDatabaseAs: a, clock });
    });
    afterAll(async () => {
      await b?.stop();
      await a?.stop();
    });
    const get = (s: TestService, headers: Record<string, string>) =>
      s.app.inject({ method: 'GET', url: '/api/v1/servers', headers }).then((res) => res.statusCode);
    const sync = async (s: TestService) => {
      if (!s.rateLimitSharing) throw new Error('no sharing on PostgreSQL with limits set');
      await s.rateLimitSharing.sync();
    };

    it("a token's requests through either count against one budget; an address's too", async () => {
      const auth = { authorization: `Bearer ${a.token}` };
      const statuses: number[] = [];
      for (let i = 0; i < 6; i++) statuses.push(await get(a, auth));
      await sync(a);
      statuses.push(await get(b, auth));
      await sync(b);
      for (let i = 0; i < 4; i++) statuses.push(await get(b, auth));
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 200, 200, 200, 200, 429]);
      await sync(b);
      await sync(a);
      expect(await get(a, auth)).toBe(429);

      const anonymous: number[] = [];
      for (let i = 0; i < 2; i++) anonymous.push(await get(a, {}));
      await sync(a);
      anonymous.push(await get(b, {}));
      await sync(b);
      anonymous.push(await get(b, {}));
      expect(anonymous).toEqual([401, 401, 401, 429]);
    });

    it('shares on its own, about once a second', async () => {
      await a.app.inject({ method: 'GET', url: '/api/v1/servers', remoteAddress: '192.0.2.77' });
      let shared: { count: number } | undefined;
      for (let i = 0; i < 100 && !shared; i++) {
        if (i > 0) await new Promise((r) => setTimeout(r, 100));
        shared = await a.storage.db
          .selectFrom('rate_limit_counts')
          .select('count')
          .where('key', '=', 'address:192.0.2.77')
          .executeTakeFirst();
      }
      expect(shared?.count).toBe(1);
    });

    it('a round that cannot reach the database is logged once, and limiting goes on in each process', async () => {
      const lines: string[] = [];
      const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
      const limiter = new RateLimiter(5, 0);
      // Nothing listens on port 1: each connection is refused at once.
      const away = new Kysely<Database>({
        dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: 'postgres://siteplane@127.0.0.1:1/none' }) }),
      });
      const sharing = rateLimitSharing(limiter, away, logger, Date.now);
      try {
        limiter.take('token', 'x');
        await sharing.sync();
        await sharing.sync();
        expect(lines.filter((l) => l.includes('sharing rate-limit counts failed'))).toHaveLength(1);
        expect(limiter.take('token', 'x')).toBe(0);
      } finally {
        await sharing.stop();
        await away.destroy();
      }
    });
  },
);
