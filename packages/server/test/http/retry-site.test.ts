// Issue 3 item 7 "retrying resumes where it stopped": POST /api/v1/sites/<uuid>/retry runs a failed
// create or delete again; the steps that already succeeded find their work done and leave it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeRecipes, seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';

// biome-ignore lint/suspicious/noExplicitAny: JSON bodies, checked field by field
type Json = Record<string, any>;

describe(`POST /api/v1/sites/<uuid>/retry (${TEST_DB}; issue 3 item 7)`, () => {
  let s: TestService;
  let ids: { server: string; serverUser: string };
  const auth = (token = s.token) => ({ authorization: `Bearer ${token}` });
  const create = async (domain: string, type = 'static-html', options: Json = {}): Promise<Json> => {
    const res = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: auth(),
      payload: { ...ids, type, domain, ssl: false, options },
    });
    if (res.statusCode !== 202) throw new Error(`create: ${res.statusCode} ${res.body}`);
    return res.json();
  };
  const retry = (uuid: string, token = s.token, payload?: unknown) =>
    s.app.inject({
      method: 'POST',
      url: `/api/v1/sites/${uuid}/retry`,
      headers: auth(token),
      ...(payload === undefined ? {} : { payload: payload as Json }),
    });
  const operation = async (uuid: string): Promise<Json> =>
    (await s.app.inject({ method: 'GET', url: `/api/v1/operations/${uuid}?limit=1000`, headers: auth() })).json();
  const lines = (op: Json): string[] => op.logs.map((l: { line: string }) => l.line);
  const ledger = async (site: string) =>
    (await s.storage.db.selectFrom('site_resources').select(['kind', 'ref']).where('site_uuid', '=', site).execute()).map(
      (r) => `${r.kind} ${r.ref}`,
    );
  const jobs = (site: string) => s.storage.db.selectFrom('jobs').select(['uuid', 'kind']).where('site_uuid', '=', site).execute();

  beforeAll(async () => {
    // `ensure nginx vhost` fails the first time it runs for each site; `remove…` (the delete) likewise.
    s = await startTestService({ recipes: fakeRecipes({ failAt: 'nginx', failTimes: 1 }) });
    ids = await seedServer(s);
  });
  afterAll(async () => s?.stop());

  it('a create that failed at a step: retry → 202, pending, then installed; done steps only checked, no duplicates', async () => {
    const site = await create('resume.example.com');
    const failed = await waitForStatus(s, site.uuid, ['failed', 'installed']);
    expect(failed).toMatchObject({
      status: 'failed',
      failure: { operation: site.operation.uuid, step: 'ensure nginx vhost', message: 'ensure nginx vhost failed (run 1)' },
    });
    expect(lines(await operation(site.operation.uuid))).toContain('would run: mkdir -p /home/deploy/resume.example.com');

    const res = await retry(site.uuid);
    expect(res.statusCode).toBe(202);
    expect(res.headers.location).toBe(`/api/v1/sites/${site.uuid}`);
    const body = res.json();
    expect(body).toMatchObject({ uuid: site.uuid, status: 'pending', operation: { kind: 'create', status: 'queued' } });
    expect(body.operation.uuid).not.toBe(site.operation.uuid);
    // What went wrong stays visible until the retry succeeded.
    expect(body.failure).toMatchObject({ operation: site.operation.uuid, step: 'ensure nginx vhost' });

    const done = await waitForStatus(s, site.uuid, ['installed', 'failed']);
    expect(done).toMatchObject({ status: 'installed', failure: null, operation: { uuid: body.operation.uuid } });
    const op = await operation(body.operation.uuid);
    expect(op.status).toBe('succeeded');
    expect(op.steps.map((x: Json) => [x.name, x.status])).toEqual([
      ['ensure site directory', 'succeeded'],
      ['ensure nginx vhost', 'succeeded'],
    ]);
    const log = lines(op);
    // After the line naming the process that ran it, the first word is why it runs again.
    expect(log[0]).toMatch(/^run by worker-.+ \(attempt 1\)$/);
    expect(log[1]).toBe(
      `retrying after operation ${site.operation.uuid} failed at step ensure nginx vhost; steps already done are checked and left as they are`,
    );
    // The step before the failed one ran again as a check and changed nothing.
    expect(log).toContain('directory /home/deploy/resume.example.com is in place; left as it is');
    expect(log.join('\n')).not.toContain('mkdir');
    expect(log.join('\n')).toContain('would run: tee /etc/nginx/sites-available/resume.example.com.conf');
    expect((await ledger(site.uuid)).sort()).toEqual([
      'directory /home/deploy/resume.example.com',
      'nginx_vhost resume.example.com.conf',
    ]);
    expect(await jobs(site.uuid)).toHaveLength(2);
  });

  it('retrying again while the retry is queued answers the same operation: one job', async () => {
    const site = await create('twice.example.com');
    await waitForStatus(s, site.uuid, ['failed']);
    // With the worker stopped the retry stays queued, so the later requests meet it.
    await s.worker?.stop();
    let queued: string;
    try {
      const [a, b] = await Promise.all([retry(site.uuid), retry(site.uuid, s.token, {})]);
      const c = await retry(site.uuid);
      for (const res of [a, b, c]) expect(res.statusCode).toBe(202);
      queued = a.json().operation.uuid;
      expect(b.json().operation.uuid).toBe(queued);
      expect(c.json()).toMatchObject({ status: 'pending', operation: { uuid: queued, kind: 'create', status: 'queued' } });
      expect((await jobs(site.uuid)).map((j) => j.kind)).toEqual(['site.create', 'site.create']);
    } finally {
      s.worker?.start();
    }
    expect(await waitForStatus(s, site.uuid, ['installed', 'failed'])).toMatchObject({
      status: 'installed',
      operation: { uuid: queued },
    });
    expect(await jobs(site.uuid)).toHaveLength(2);
  });

  it('nothing to retry is a 409 naming the status: installed, pending, deleting', async () => {
    const site = await create('fine.example.com');
    await waitForStatus(s, site.uuid, ['failed']);
    expect((await retry(site.uuid)).statusCode).toBe(202);
    await waitForStatus(s, site.uuid, ['installed']);
    const installed = await retry(site.uuid);
    expect(installed.statusCode).toBe(409);
    expect(installed.json()).toMatchObject({ code: 'conflict', detail: expect.stringContaining('installed') });

    await s.worker?.stop();
    try {
      // A first create, queued: it has not failed.
      const fresh = await create('fresh.example.com');
      const pending = await retry(fresh.uuid);
      expect(pending.statusCode).toBe(409);
      expect(pending.json().detail).toContain('pending');
      // A plain delete of an installed site, queued.
      const del = await s.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.uuid}`, headers: auth() });
      expect(del.statusCode).toBe(202);
      const deleting = await retry(site.uuid);
      expect(deleting.statusCode).toBe(409);
      expect(deleting.json().detail).toContain('deleting');
      expect((await jobs(site.uuid)).map((j) => j.kind)).toEqual(['site.create', 'site.create', 'site.delete']);
    } finally {
      s.worker?.start();
    }
    await waitForStatus(s, site.uuid, ['gone']);
    // Deleted: 404 like every other site route.
    expect((await retry(site.uuid)).statusCode).toBe(404);
  });

  it('refuses: unknown, foreign or non-UUID site 404, read-only token 403, a body 422 naming its fields', async () => {
    const site = await create('refused.example.com');
    await waitForStatus(s, site.uuid, ['failed']);
    expect((await retry('00000000-0000-4000-8000-000000000000')).statusCode).toBe(404);
    expect((await retry('not-a-uuid')).statusCode).toBe(404);
    expect((await retry(site.uuid, s.otherTenantToken)).statusCode).toBe(404);
    expect((await retry(site.uuid, s.readToken)).statusCode).toBe(403);
    const body = await retry(site.uuid, s.token, { x: 1, deleteDatabase: true });
    expect(body.statusCode).toBe(422);
    expect(body.json().errors).toEqual([
      expect.objectContaining({ field: 'x', code: 'unknown_field' }),
      expect.objectContaining({ field: 'deleteDatabase', code: 'unknown_field' }),
    ]);
    // None of them queued anything.
    expect(await jobs(site.uuid)).toHaveLength(1);
    expect(((await waitForStatus(s, site.uuid, ['failed'])) as Json).operation.uuid).toBe(site.operation.uuid);
  });
});

describe(`POST …/retry after a failed delete (${TEST_DB}; issue 3 item 7)`, () => {
  let s: TestService;
  let ids: { server: string; serverUser: string };
  const auth = () => ({ authorization: `Bearer ${s.token}`, 'content-type': 'application/json' });

  beforeAll(async () => {
    // The recipe's one remove step fails the first time it runs for each site.
    s = await startTestService({ recipes: fakeRecipes({ failAt: 'remove', failTimes: 1 }) });
    ids = await seedServer(s);
  });
  afterAll(async () => s?.stop());

  it('delete_failed → retry → deleting with the same deleteDatabase → gone, the database dropped', async () => {
    const created = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: auth(),
      payload: {
        ...ids,
        type: 'php',
        domain: 'drop.example.com',
        ssl: false,
        options: { shouldCreateDatabaseAndUser: true, database: 'dropme' },
      },
    });
    const site = created.json();
    await waitForStatus(s, site.uuid, ['installed']);
    const del = await s.app.inject({
      method: 'DELETE',
      url: `/api/v1/sites/${site.uuid}`,
      headers: auth(),
      payload: { deleteDatabase: true },
    });
    const failed = (await waitForStatus(s, site.uuid, ['delete_failed', 'gone'])) as Json;
    expect(failed).toMatchObject({
      status: 'delete_failed',
      failure: { operation: del.json().operation.uuid, step: 'remove what the ledger lists' },
    });
    expect(failed.failure.left).toHaveLength(3);

    const res = await s.app.inject({ method: 'POST', url: `/api/v1/sites/${site.uuid}/retry`, headers: auth(), payload: {} });
    expect(res.statusCode).toBe(202);
    expect(res.headers.location).toBe(`/api/v1/sites/${site.uuid}`);
    expect(res.json()).toMatchObject({ status: 'deleting', operation: { kind: 'delete', status: 'queued' } });
    const again = res.json().operation.uuid as string;
    expect(again).not.toBe(del.json().operation.uuid);
    const params = await s.storage.db
      .selectFrom('operations')
      .select('params')
      .where('uuid', '=', again)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(params.params)).toEqual({ deleteDatabase: true });

    await waitForStatus(s, site.uuid, ['gone']);
    const op = (await s.app.inject({ method: 'GET', url: `/api/v1/operations/${again}`, headers: auth() })).json();
    expect(op.status).toBe('succeeded');
    expect(op.logs.map((l: { line: string }) => l.line).join('\n')).toContain('rm -rf dropme');
    expect(await s.storage.db.selectFrom('site_resources').select('ref').where('site_uuid', '=', site.uuid).execute()).toEqual(
      [],
    );
    // The database was dropped, so its name is free on the server again.
    const reuse = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: auth(),
      payload: {
        ...ids,
        type: 'php',
        domain: 'drop2.example.com',
        ssl: false,
        options: { shouldCreateDatabaseAndUser: true, database: 'dropme' },
      },
    });
    expect(reuse.statusCode).toBe(202);
  });
});
