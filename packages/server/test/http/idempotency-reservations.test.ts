import { createHash } from 'node:crypto';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installErrorHandler } from '../../src/http/error-handler.js';
import { IdempotencyKeys, idempotencyScope } from '../../src/http/idempotency.js';
import { IdempotencyStore } from '../../src/storage/idempotency-store.js';
import { actorForToken } from '../../src/storage/tokens.js';
import { seedServer, startTestService, TEST_DB, type TestService } from '../support/test-service.js';

const HOUR = 60 * 60 * 1000;

/**
 * What becomes of a key's row: purged after 24 hours, taken over when the request that reserved it
 * died, freed when it failed (ARCHITECTURE §2 Idempotency).
 */
describe(`idempotency reservations on ${TEST_DB}`, () => {
  let s: TestService;
  let ids: { server: string; serverUser: string };
  let at = Date.parse('2030-01-01T00:00:00.000Z');
  const clock = { now: () => new Date(at) };
  beforeAll(async () => {
    s = await startTestService({ clock, env: { SITEPLANE_WORKER: 'off' } });
    ids = await seedServer(s);
  });
  afterAll(async () => s?.stop());

  const body = (domain: string) => ({ ...ids, type: 'static-html', domain, ssl: false, options: {} });
  const post = (key: string, domain: string) =>
    s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${s.token}`, 'idempotency-key': key },
      payload: body(domain),
    });
  const rowsOf = (key: string) => s.storage.db.selectFrom('idempotency_keys').selectAll().where('key', '=', key).execute();

  it('purges stored responses once they are 24 hours old, without a request for their key', async () => {
    expect((await post('day-old', 'day-old.example.com')).statusCode).toBe(202);
    expect(await rowsOf('day-old')).toHaveLength(1);
    at += 23 * HOUR;
    expect((await post('later', 'later.example.com')).statusCode).toBe(202);
    expect(await rowsOf('day-old')).toHaveLength(1); // still within its day
    at += 2 * HOUR;
    expect((await post('next-day', 'next-day.example.com')).statusCode).toBe(202);
    expect(await rowsOf('day-old')).toHaveLength(0);
    expect(await rowsOf('later')).toHaveLength(1);
  });

  /** The reservation of a request for `domain` sent with `key`, leased until `until`, as its process left it. */
  async function leftReservation(key: string, domain: string, until: number) {
    const actor = await actorForToken(s.storage.db, s.token);
    await s.storage.db
      .insertInto('idempotency_keys')
      .values({
        ...idempotencyScope(actor!),
        key,
        method: 'POST',
        path: '/api/v1/sites',
        body_hash: createHash('sha256')
          .update(JSON.stringify(body(domain)))
          .digest('hex'),
        status_code: null,
        response: null,
        headers: null,
        created_at: new Date(at - 5 * 60_000).toISOString(),
        reservation: 'a process that died',
        reserved_until: new Date(until).toISOString(),
      })
      .execute();
  }

  it('a reservation whose process died is taken over once its lease ran out, not in progress for a day', async () => {
    await leftReservation('crashed', 'crashed.example.com', at - 1);
    const res = await post('crashed', 'crashed.example.com');
    expect(res.statusCode).toBe(202);
    const [row] = await rowsOf('crashed');
    expect(row).toMatchObject({ status_code: 202, reservation: null });
  });

  it('a live reservation answers 409 idempotency_key_in_progress with Retry-After', async () => {
    await leftReservation('running', 'running.example.com', at + 30_000);
    const res = await post('running', 'running.example.com');
    expect(res.statusCode).toBe(409);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json().code).toBe('idempotency_key_in_progress');
  });

  it('a request whose handler threw frees its key: the retry runs, and a late finisher of a taken-over key changes nothing', async () => {
    const actor = (await actorForToken(s.storage.db, s.token))!;
    const store = new IdempotencyStore(s.storage.db);
    const keys = new IdempotencyKeys(store, s.useCases.secrets, clock);
    const app = Fastify();
    installErrorHandler(app);
    keys.install(app);
    let runs = 0;
    app.post('/work', async (req, reply) => {
      if (await keys.apply(req, reply, actor)) return reply;
      runs++;
      if (runs === 1) throw new Error('the handler failed');
      return reply
        .status(201)
        .type('application/json')
        .send(JSON.stringify({ run: runs }));
    });
    const send = () => app.inject({ method: 'POST', url: '/work', headers: { 'idempotency-key': 'threw' }, payload: {} });
    expect((await send()).statusCode).toBe(500);
    const retried = await send();
    expect(retried.statusCode).toBe(201);
    expect(retried.json()).toEqual({ run: 2 });
    expect((await send()).json()).toEqual({ run: 2 });
    await app.close();

    // A holder whose reservation was taken over cannot complete or free the key of its successor.
    const times = { now: new Date(at).toISOString(), freshAfter: '2000-01-01', reservedUntil: new Date(at - 1).toISOString() };
    const request = { ...idempotencyScope(actor), key: 'fenced', method: 'POST', path: '/x', body_hash: 'h' };
    const first = await store.reserve(request, times);
    const second = await store.reserve(request, { ...times, reservedUntil: new Date(at + 60_000).toISOString() });
    if (!('reserved' in first) || !('reserved' in second)) throw new Error('expected two reservations in turn');
    await store.complete(first.reserved, 201, 'late', {});
    await store.release(first.reserved);
    expect(await rowsOf('fenced')).toMatchObject([{ reservation: second.reserved.token, status_code: null }]);
  });
});
