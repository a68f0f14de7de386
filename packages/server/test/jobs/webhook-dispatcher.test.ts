// Outgoing webhooks' delivery state lives in the database (jobs/webhook-dispatcher.ts): a new
// dispatcher (a restarted worker) resumes a pending retry where the last one stopped, with the same
// webhook-id; two dispatchers working at once (two worker processes) deliver each event once; a
// dispatcher sends only events of the endpoint's team. Driven turn by turn with a controlled clock,
// on a service whose own worker is off, against a real receiver on loopback.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedFetch } from '../../src/egress/guarded-fetch.js';
import { WebhookDispatcher } from '../../src/jobs/webhook-dispatcher.js';
import { announceEvents, recordEvent } from '../../src/storage/event-log.js';
import { LOOPBACK_TARGETS, startTestService, TEST_DB, type TestService } from '../support/test-service.js';

describe(`webhook dispatcher (${TEST_DB})`, () => {
  let s: TestService;
  let receiver: http.Server;
  let base: string;
  const received: { path: string; id: string }[] = [];
  const answers: Record<string, number[]> = {};
  /** Answers of /slow, held until the test lets them go. */
  const held: (() => void)[] = [];
  let now = new Date('2026-11-26T12:00:00Z');
  const clock = { now: () => now };

  const dispatcher = () =>
    new WebhookDispatcher({
      db: s.storage.db,
      dialect: s.storage.dialect,
      // The service's own key: what sealed the endpoints' secrets.
      secrets: s.useCases.secrets,
      clock,
      log: pino({ level: 'silent' }),
      fetch: guardedFetch(s.useCases.egress),
      backoffMs: [60_000],
    });
  const addEndpoint = async (path: string, token = s.token) => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/webhooks',
      headers: { authorization: `Bearer ${token}` },
      payload: { url: `${base}${path}`, events: ['site.*'] },
    });
    expect(res.statusCode, res.body).toBe(201);
    return res.json() as { uuid: string; team: string };
  };
  const record = (team: string, n: number) =>
    s.storage.db.transaction().execute(async (trx) => {
      for (let i = 0; i < n; i++)
        await recordEvent(trx, { team, type: 'site.created', subject: randomUUID(), data: { i }, now: now.toISOString() });
    });
  const log = (hook: string) =>
    s.storage.db
      .selectFrom('outgoing_webhook_deliveries')
      .selectAll()
      .where('webhook_uuid', '=', hook)
      .orderBy('created_at')
      .orderBy('uuid')
      .execute();

  /**
   * Turns until `done`: on PostgreSQL an event waits until every older transaction in the cluster
   * has ended (storage/event-reader.ts), and another suite's may still be open for a moment.
   */
  const turnsUntil = async (turn: () => Promise<unknown>, done: () => boolean | Promise<boolean>) => {
    const end = Date.now() + 10_000;
    for (;;) {
      await turn();
      if (await done()) return;
      if (Date.now() > end) throw new Error('not delivered in time');
      await new Promise((r) => setTimeout(r, 20));
    }
  };

  beforeAll(async () => {
    receiver = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        const path = req.url ?? '/';
        received.push({ path, id: String(req.headers['webhook-id']) });
        const list = answers[path];
        if (path === '/slow') {
          held.push(() => res.writeHead(200).end());
          return;
        }
        res.writeHead(list ? (list.length > 1 ? (list.shift() as number) : (list[0] as number)) : 200).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    s = await startTestService({ env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS, SITEPLANE_WORKER: 'off' } });
  });
  afterAll(async () => {
    await s?.stop();
    await new Promise((r) => receiver?.close(r));
  });

  it('a restarted dispatcher resumes the pending retry from the database, with the same webhook-id', async () => {
    answers['/restart'] = [500, 200];
    const hook = await addEndpoint('/restart');
    await record(hook.team, 1);
    await turnsUntil(
      () => dispatcher().turn(),
      async () => (await log(hook.uuid)).length > 0,
    );
    const first = await log(hook.uuid);
    expect(first).toMatchObject([{ attempt: 1, status_code: 500, delivered_at: null }]);
    // Not due yet: a new dispatcher sends nothing.
    await dispatcher().turn();
    expect(await log(hook.uuid)).toHaveLength(1);
    now = new Date(now.getTime() + 61_000);
    await dispatcher().turn();
    const after = await log(hook.uuid);
    expect(after).toHaveLength(2);
    expect(after[1]).toMatchObject({ attempt: 2, status_code: 200, event_seq: first[0]?.event_seq });
    const ids = received.filter((r) => r.path === '/restart').map((r) => r.id);
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBe(ids[0]);
  });

  it('two dispatchers at once deliver each event once, in order, and only the endpoint team’s', async () => {
    const hook = await addEndpoint('/pair');
    const other = await addEndpoint('/theirs', s.otherTenantToken);
    await record(hook.team, 12);
    await record(other.team, 3);
    const a = dispatcher();
    const b = dispatcher();
    const count = (path: string) => received.filter((r) => r.path === path).length;
    await turnsUntil(
      () => Promise.all([a.turn(), b.turn(), a.turn()]),
      () => count('/pair') >= 12 && count('/theirs') >= 3,
    );
    // A few more rounds: nothing is sent twice.
    for (let i = 0; i < 3; i++) await Promise.all([a.turn(), b.turn(), a.turn()]);
    const ids = received.filter((r) => r.path === '/pair').map((r) => r.id);
    expect(ids).toHaveLength(12);
    expect(new Set(ids).size).toBe(12);
    const seqs = ids.map((id) => Number(id.replace('evt_', '')));
    expect(seqs).toEqual([...seqs].sort((x, y) => x - y));
    expect(received.filter((r) => r.path === '/theirs')).toHaveLength(3);
    const theirIds = new Set(received.filter((r) => r.path === '/theirs').map((r) => r.id));
    for (const id of ids) expect(theirIds.has(id)).toBe(false);
    expect((await log(hook.uuid)).map((d) => d.attempt)).toEqual(Array(12).fill(1));
  });

  it('a receiver that does not answer holds up only its own endpoint; stop cuts its request short', async () => {
    const slow = await addEndpoint('/slow');
    const fast = await addEndpoint('/fast');
    const running = new WebhookDispatcher(
      {
        db: s.storage.db,
        dialect: s.storage.dialect,
        secrets: s.useCases.secrets,
        clock,
        log: pino({ level: 'silent' }),
        fetch: guardedFetch(s.useCases.egress),
      },
      20,
    );
    running.start();
    try {
      // One event, then another once the first reached /fast: the second goes out in a later pass,
      // while /slow still sits on the first.
      const fastCount = async (n: number) => {
        // Shorter than the 10 s request timeout, which would end the wait on /slow anyway.
        const end = Date.now() + 5_000;
        while (received.filter((r) => r.path === '/fast').length < n && Date.now() < end)
          await new Promise((r) => setTimeout(r, 20));
      };
      await record(slow.team, 1);
      await fastCount(1);
      await record(slow.team, 1);
      await fastCount(2);
      expect(received.filter((r) => r.path === '/fast')).toHaveLength(2);
      expect(received.filter((r) => r.path === '/slow')).toHaveLength(1);
      // The receiver has the request; the answer may still be on its way back: stop once it is logged.
      const end = Date.now() + 5_000;
      while ((await log(fast.uuid)).length < 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    } finally {
      await running.stop();
    }
    // The cut-short attempt is not the receiver's failure: nothing logged, the event is sent again later.
    expect(await log(slow.uuid)).toHaveLength(0);
    expect((await log(fast.uuid)).map((d) => d.status_code)).toEqual([200, 200]);
    for (const answer of held) answer();
  });

  it('a change notification wakes it: events go out at once, not at its (here ten-minute) poll', async () => {
    const hook = await addEndpoint('/woken');
    const running = new WebhookDispatcher(
      {
        db: s.storage.db,
        dialect: s.storage.dialect,
        secrets: s.useCases.secrets,
        clock,
        log: pino({ level: 'silent' }),
        fetch: guardedFetch(s.useCases.egress),
        // The service's notifier: LISTEN/NOTIFY on PostgreSQL, in-process on SQLite.
        changes: s.useCases.changes,
      },
      600_000,
    );
    running.start();
    const count = () => received.filter((r) => r.path === '/woken').length;
    const until = async (n: number) => {
      const end = Date.now() + 15_000;
      while (count() < n && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      expect(count()).toBe(n);
    };
    try {
      // Its first turn ran at start and found nothing; each burst below is announced as writers do.
      await new Promise((r) => setTimeout(r, 200));
      await record(hook.team, 2);
      announceEvents(s.useCases.changes, hook.team);
      await until(2);
      await record(hook.team, 3);
      announceEvents(s.useCases.changes, hook.team);
      await until(5);
    } finally {
      await running.stop();
    }
    const ids = received.filter((r) => r.path === '/woken').map((r) => Number(r.id.replace('evt_', '')));
    expect(ids).toEqual([...ids].sort((x, y) => x - y));
    expect(new Set(ids).size).toBe(5);
  });
});
