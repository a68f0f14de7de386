import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';

describe(`sites lifecycle on ${TEST_DB} (spec §4.1, §3)`, () => {
  let s: TestService;
  let ids: { server: string; serverUser: string };
  const auth = () => ({ authorization: `Bearer ${s.token}` });
  const createSite = (type: string, domain: string, options: Record<string, unknown>) =>
    s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: auth(),
      payload: { ...ids, type, domain, ssl: false, options },
    });

  beforeAll(async () => {
    s = await startTestService();
    ids = await seedServer(s);
  });
  afterAll(async () => s?.stop());

  it('creates a static site: 202, Location, operation; pending → installed with every command logged', async () => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: auth(),
      payload: { ...ids, type: 'static-html', domain: 'Example.COM', ssl: false, options: { webDirectory: '' } },
    });
    expect(res.statusCode).toBe(202);
    const site = res.json();
    expect(res.headers.location).toBe(`/api/v1/sites/${site.uuid}`);
    expect(site).toMatchObject({ type: 'static-html', domain: 'example.com', status: 'pending', free_domain: false });
    expect(site.operation).toMatchObject({ kind: 'create', status: 'queued' });
    const done = await waitForStatus(s, site.uuid, ['installed', 'failed']);
    expect(done.status).toBe('installed');
    const op = await s.app.inject({ method: 'GET', url: `/api/v1/operations/${site.operation.uuid}`, headers: auth() });
    const body = op.json();
    expect(body.status).toBe('succeeded');
    expect(body.steps.map((x: { name: string }) => x.name)).toEqual(['ensure site directory', 'ensure nginx vhost']);
    expect(body.logs.map((l: { line: string }) => l.line).join('\n')).toContain('would run: mkdir -p /home/deploy/example.com');
    const later = await s.app.inject({
      method: 'GET',
      url: `/api/v1/operations/${site.operation.uuid}?after=1`,
      headers: auth(),
    });
    expect(later.json().logs.every((l: { seq: number }) => l.seq > 1)).toBe(true);
  });

  it('lists sites by server with the list envelope and cursor paging (ARCHITECTURE §2 Lists)', async () => {
    for (const d of ['a.example.org', 'b.example.org', 'c.example.org']) {
      const r = await s.app.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: auth(),
        payload: { ...ids, type: 'Static HTML', domain: d, ssl: false, options: {} },
      });
      expect(r.statusCode).toBe(202);
    }
    const first = await s.app.inject({ method: 'GET', url: `/api/v1/sites?server=${ids.server}&limit=2`, headers: auth() });
    expect(first.statusCode).toBe(200);
    const page1 = first.json();
    expect(page1.data).toHaveLength(2);
    expect(page1.meta.limit).toBe(2);
    expect(first.headers.link).toContain('rel="next"');
    const second = await s.app.inject({
      method: 'GET',
      url: `/api/v1/sites?server=${ids.server}&limit=2&cursor=${page1.meta.next_cursor}`,
      headers: auth(),
    });
    const page2 = second.json();
    const all = [...page1.data, ...page2.data].map((x: { domain: string }) => x.domain);
    expect(all).toEqual(['example.com', 'a.example.org', 'b.example.org', 'c.example.org']);
    expect(page2.meta.next_cursor).toBeNull();
  });

  it('GET /sites without server is a 400 naming the query field', async () => {
    const res = await s.app.inject({ method: 'GET', url: '/api/v1/sites', headers: auth() });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_query', errors: [{ field: 'server', code: 'required' }] });
  });

  it('generates database name, user and password, returns the password once and redacts it in logs', async () => {
    const res = await createSite('laravel', 'app.example.net', { phpVersion: '8.2', shouldCreateDatabaseAndUser: true });
    expect(res.statusCode).toBe(202);
    const site = res.json();
    expect(site.database.name).toMatch(/^laravel_db_[a-z0-9]{8}$/);
    expect(site.database.engine).toBe('mysql80');
    expect(site.generated_database_password).toMatch(/^[A-Za-z0-9]{32}$/);
    await waitForStatus(s, site.uuid, ['installed']);
    const again = await s.app.inject({ method: 'GET', url: `/api/v1/sites/${site.uuid}`, headers: auth() });
    expect(again.body).not.toContain(site.generated_database_password);
    const op = await s.app.inject({ method: 'GET', url: `/api/v1/operations/${site.operation.uuid}`, headers: auth() });
    expect(op.body).not.toContain(site.generated_database_password);
    expect(op.body).toContain('with password ***');
    // Rule 5: the server now has mysql80; asking for another MySQL version is a 422.
    const conflict = await createSite('php', 'other.example.net', {
      shouldCreateDatabaseAndUser: true,
      preferredDbServer: 'mariadb1011',
    });
    expect(conflict.statusCode).toBe(422);
    expect(conflict.json().errors).toEqual([
      expect.objectContaining({ field: 'options.preferredDbServer', code: 'db_server_version_conflict' }),
    ]);
  });

  it('deletes: 202, deleting → gone (404), database kept unless deleteDatabase (spec §4.1 DELETE)', async () => {
    const created = await createSite('php', 'del.example.net', { shouldCreateDatabaseAndUser: true, database: 'keepme' });
    const site = created.json();
    await waitForStatus(s, site.uuid, ['installed']);
    const del = await s.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.uuid}`, headers: auth() });
    expect(del.statusCode).toBe(202);
    expect(del.json()).toMatchObject({ status: 'deleting', operation: { kind: 'delete' } });
    await waitForStatus(s, site.uuid, ['gone']);
    // The kept database still occupies its name on the server.
    const reuse = await createSite('php', 'del2.example.net', { shouldCreateDatabaseAndUser: true, database: 'keepme' });
    expect(reuse.statusCode).toBe(422);
    expect(reuse.json().errors[0]).toMatchObject({ field: 'options.database', code: 'database_taken' });
    const op = await s.app.inject({ method: 'GET', url: `/api/v1/operations/${del.json().operation.uuid}`, headers: auth() });
    expect(
      op
        .json()
        .logs.map((l: { line: string }) => l.line)
        .join('\n'),
    ).not.toContain('rm -rf keepme');
  });

  it('deleteDatabase true frees the name (spec §4.1 DELETE)', async () => {
    const created = await createSite('php', 'drop.example.net', { shouldCreateDatabaseAndUser: true, database: 'dropme' });
    const site = created.json();
    await waitForStatus(s, site.uuid, ['installed']);
    const del = await s.app.inject({
      method: 'DELETE',
      url: `/api/v1/sites/${site.uuid}`,
      headers: { ...auth(), 'content-type': 'application/json' },
      payload: { deleteDatabase: true },
    });
    expect(del.statusCode).toBe(202);
    await waitForStatus(s, site.uuid, ['gone']);
    const op = await s.app.inject({ method: 'GET', url: `/api/v1/operations/${del.json().operation.uuid}`, headers: auth() });
    expect(
      op
        .json()
        .logs.map((l: { line: string }) => l.line)
        .join('\n'),
    ).toContain('rm -rf dropme');
    const reuse = await createSite('php', 'drop2.example.net', { shouldCreateDatabaseAndUser: true, database: 'dropme' });
    expect(reuse.statusCode).toBe(202);
  });
});
