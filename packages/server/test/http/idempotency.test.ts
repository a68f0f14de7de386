import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
});
