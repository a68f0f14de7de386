import { describe, expect, it } from 'vitest';
import { AcmeOrderLog } from '../../src/app/acme-order-log.js';
import { WORKER_STALLED_AFTER_MS } from '../../src/app/service-health.js';
import { startTestService, TEST_DB, type TestService } from '../support/test-service.js';

function movableClock() {
  let offset = 0;
  return { now: () => new Date(Date.now() + offset), advance: (ms: number) => (offset += ms) };
}

const health = async (s: TestService) => {
  const res = await s.app.inject({ method: 'GET', url: '/api/v1/health' });
  return { code: res.statusCode, body: res.json() };
};

describe(`GET /api/v1/health says which part is degraded, on ${TEST_DB}`, () => {
  it('all well: status ok, the first round booleans kept, every part ok', async () => {
    const s = await startTestService();
    try {
      expect(await health(s)).toMatchObject({
        code: 200,
        body: { status: 'ok', database: true, worker: true, parts: { database: 'ok', worker: 'ok', acme: 'ok' } },
      });
    } finally {
      await s.stop();
    }
  });

  it('a process without a worker (SITEPLANE_WORKER=off) is not degraded by it', async () => {
    const s = await startTestService({ env: { SITEPLANE_WORKER: 'off' } });
    try {
      expect(await health(s)).toMatchObject({ code: 200, body: { status: 'ok', worker: false, parts: { worker: 'off' } } });
    } finally {
      await s.stop();
    }
  });

  it('a worker whose claim loop stopped coming round is stalled: status degraded, still 200 (the API serves)', async () => {
    const clock = movableClock();
    const s = await startTestService({ clock });
    try {
      clock.advance(WORKER_STALLED_AFTER_MS - 60_000);
      await new Promise((r) => setTimeout(r, 200)); // the live worker comes round (pollMs 50) on the moved clock
      expect((await health(s)).body.parts.worker).toBe('ok');
      // Hung: the loop no longer runs (as a claim stuck on a lock would leave it).
      await s.worker?.stop();
      clock.advance(WORKER_STALLED_AFTER_MS + 1_000);
      expect(await health(s)).toMatchObject({
        code: 200,
        body: { status: 'degraded', database: true, parts: { database: 'ok', worker: 'stalled', acme: 'ok' } },
      });
    } finally {
      await s.stop();
    }
  });

  it('a database that cannot be reached: 503, database down', async () => {
    const s = await startTestService();
    try {
      await s.storage.close();
      expect(await health(s)).toMatchObject({
        code: 503,
        body: { status: 'degraded', database: false, parts: { database: 'down' } },
      });
    } finally {
      s.storage.close = async () => {};
      await s.stop();
    }
  });
});

describe('ACME health from the last orders', () => {
  it('degraded only when each of the last three orders failed with ca_unreachable', () => {
    const log = new AcmeOrderLog(3);
    log.record('ca_unreachable');
    log.record('ca_unreachable');
    expect(log.degraded).toBe(false);
    log.record('ca_unreachable');
    expect(log.degraded).toBe(true);
    log.record('issued');
    expect(log.degraded).toBe(false);
    for (let i = 0; i < 2; i++) log.record('ca_unreachable');
    expect(log.degraded).toBe(false);
    log.record('dns_not_pointing');
    expect(log.degraded).toBe(false);
  });
});
