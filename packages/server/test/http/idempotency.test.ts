import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../src/storage/tokens.js';
import { seedServer, startTestService, TEST_DB, type TestService } from '../support/test-service.js';

describe(`Idempotency-Key on ${TEST_DB} (ARCHITECTURE §2)`, () => {
  let s: TestService;
  let ids: { server: string; serverUser: string };
  beforeAll(async () => {
    s = await startTestService();
    ids = await seedServer(s);
  });
  afterAll(async () => s?.stop());

  const post = (key: string, domain: string) =>
    s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${s.token}`, 'idempotency-key': key },
      payload: { ...ids, type: 'static-html', domain, ssl: false, options: {} },
    });

  it('the same key and body returns the first response and creates one site', async () => {
    const first = await post('k-1', 'idem.example.com');
    const second = await post('k-1', 'idem.example.com');
    expect(first.statusCode).toBe(202);
    expect(second.statusCode).toBe(202);
    expect(second.json().uuid).toBe(first.json().uuid);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers.location).toBe(first.headers.location);
    const list = await s.app.inject({
      method: 'GET',
      url: `/api/v1/sites?server=${ids.server}`,
      headers: { authorization: `Bearer ${s.token}` },
    });
    expect(list.json().data.filter((x: { domain: string }) => x.domain === 'idem.example.com')).toHaveLength(1);
  });

  it('the same key with another body is 422 idempotency_key_reused', async () => {
    await post('k-2', 'one.example.com');
    const res = await post('k-2', 'two.example.com');
    expect(res.statusCode).toBe(422);
    expect(res.json().code).toBe('idempotency_key_reused');
  });

  it('DELETE with a key is replayed too', async () => {
    const site = (await post('k-3', 'gone.example.com')).json();
    const del = () =>
      s.app.inject({
        method: 'DELETE',
        url: `/api/v1/sites/${site.uuid}`,
        headers: { authorization: `Bearer ${s.token}`, 'idempotency-key': 'k-4' },
      });
    const a = await del();
    const b = await del();
    expect(a.statusCode).toBe(202);
    expect(b.json().operation.uuid).toBe(a.json().operation.uuid);
  });

  it('keys are per account: another tenant may use the same key', async () => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/servers',
      headers: { authorization: `Bearer ${s.otherTenantToken}`, 'idempotency-key': 'k-1' },
      payload: { name: 'x', ip: '127.0.0.1', connection: 'dry-run' },
    });
    expect(res.statusCode).toBe(201);
  });

  it("keys are per team set: a team-beta token sending alpha's key and body never gets alpha's answer", async () => {
    const alpha = (await createToken(s.storage.db, { name: 'alpha', scope: 'write', team: 'alpha' })).token;
    const beta = (await createToken(s.storage.db, { name: 'beta', scope: 'write', team: 'beta' })).token;
    const alphaIds = await seedServer(s, {}, alpha);
    const send = (token: string) =>
      s.app.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: { authorization: `Bearer ${token}`, 'idempotency-key': 'team-key' },
        payload: { ...alphaIds, type: 'static-html', domain: 'alpha.example.com', ssl: false, options: {} },
      });
    const first = await send(alpha);
    expect(first.statusCode).toBe(202);
    const site = first.json().uuid as string;
    // Beta cannot see alpha's server: its own request runs and is refused; nothing of alpha's leaks.
    const fromBeta = await send(beta);
    expect(fromBeta.statusCode).toBe(422);
    expect(fromBeta.json().errors).toContainEqual(expect.objectContaining({ field: 'server', code: 'not_found' }));
    expect(fromBeta.headers['idempotent-replayed']).toBeUndefined();
    expect(fromBeta.body).not.toContain(site);
    // A global token reaches every team of the account: another set, another key space.
    const fromGlobal = await send(s.token);
    expect(fromGlobal.headers['idempotent-replayed']).toBeUndefined();
    expect(fromGlobal.body).not.toContain(site);
    const again = await send(alpha);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json().uuid).toBe(site);
  });

  it('stores the response sealed: the generated database password is never in the database in clear', async () => {
    const db = await seedServer(s, { mysql: 'mysql80' });
    const send = () =>
      s.app.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: { authorization: `Bearer ${s.token}`, 'idempotency-key': 'with-password' },
        payload: {
          ...db,
          type: 'laravel',
          domain: 'secret.example.com',
          ssl: false,
          options: { phpVersion: '8.2', shouldCreateDatabaseAndUser: true },
        },
      });
    const first = await send();
    expect(first.statusCode).toBe(202);
    const password = first.json().generated_database_password as string;
    expect(password).toMatch(/^[A-Za-z0-9]{32}$/);
    const rows = await s.storage.db.selectFrom('idempotency_keys').selectAll().execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(JSON.stringify(rows)).not.toContain(password);
    const replay = await send();
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().generated_database_password).toBe(password);
    expect(replay.body).toBe(first.body);
  });
});
