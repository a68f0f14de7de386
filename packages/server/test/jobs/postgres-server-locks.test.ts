import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PostgresServerLocks } from '../../src/jobs/postgres-server-locks.js';
import { startTestService, TEST_DB, type TestService } from '../support/test-service.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Two PostgresServerLocks on one database stand for two worker processes: advisory locks belong
// to sessions, and each holder works on a pool connection of its own.
describe.skipIf(TEST_DB !== 'postgres')('server locks across worker processes on PostgreSQL', () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService({ env: { SITEPLANE_WORKER: 'off' } });
  });
  afterAll(async () => s?.stop());

  it('one name is held by one process at a time; the other waits, then runs', async () => {
    const a = new PostgresServerLocks(s.storage.db, 20);
    const b = new PostgresServerLocks(s.storage.db, 20);
    const events: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const first = a.withLock('server-1:packages', async () => {
      events.push('a in');
      await gate;
      events.push('a out');
    });
    await sleep(50);
    const second = b.withLock('server-1:packages', async () => {
      events.push('b in');
    });
    await sleep(200);
    expect(events).toEqual(['a in']); // b is still waiting
    release();
    await Promise.all([first, second]);
    expect(events).toEqual(['a in', 'a out', 'b in']);
  });

  it('other names do not wait; a failing holder releases its lock', async () => {
    const a = new PostgresServerLocks(s.storage.db, 20);
    const b = new PostgresServerLocks(s.storage.db, 20);
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const held = a.withLock('server-2:packages', () => gate);
    await sleep(50);
    expect(await b.withLock('server-2:nginx', async () => 'ran')).toBe('ran');
    release();
    await held;
    await expect(a.withLock('server-3:packages', async () => Promise.reject(new Error('apt failed')))).rejects.toThrow(
      'apt failed',
    );
    expect(await b.withLock('server-3:packages', async () => 'free again')).toBe('free again');
  });
});
