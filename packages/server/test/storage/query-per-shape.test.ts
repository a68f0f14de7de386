import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reusesShape, selectPerShape } from '../../src/storage/query-per-shape.js';
import { seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';

describe(`selectPerShape on ${TEST_DB}: Kysely's select SQL compiled once per shape`, () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService({ env: { SITEPLANE_WORKER: 'off' } });
  });
  afterAll(async () => s?.stop());

  const accounts = Array.from({ length: 3 }, (_, i) => ({
    uuid: randomUUID(),
    name: `shape-${i}-${randomUUID()}`,
    created_at: '2026-01-01',
  }));
  const named = (shape: string, uuids: string[], parameters: unknown[] = uuids) =>
    selectPerShape(s.storage.db, shape, parameters, () =>
      s.storage.db.selectFrom('accounts').select(['uuid', 'name']).where('uuid', 'in', uuids).orderBy('name'),
    );

  beforeAll(async () => {
    await s.storage.db.insertInto('accounts').values(accounts).execute();
  });

  it('answers each call with its own values once the shape is reused', async () => {
    const [a, b, c] = accounts as [(typeof accounts)[0], (typeof accounts)[0], (typeof accounts)[0]];
    expect((await named('test two', [a.uuid, b.uuid])).map((r) => r.name)).toEqual([a.name, b.name]);
    expect(reusesShape(s.storage.db, 'test two')).toBe(true);
    expect((await named('test two', [c.uuid, b.uuid])).map((r) => r.name)).toEqual([b.name, c.name]);
    expect(await named('test two', [randomUUID(), randomUUID()])).toEqual([]);
  });

  it('parameters that are not what Kysely compiled send the shape through the builder, with right answers', async () => {
    const [a, b] = accounts as [(typeof accounts)[0], (typeof accounts)[0]];
    expect((await named('test reversed', [a.uuid, b.uuid], [b.uuid, a.uuid])).map((r) => r.name)).toEqual([a.name, b.name]);
    expect(reusesShape(s.storage.db, 'test reversed')).toBe(false);
    expect((await named('test reversed', [b.uuid], [b.uuid, a.uuid])).map((r) => r.name)).toEqual([b.name]);
  });

  it("a create's server lookup and taken-names query reuse their SQL, and the rules still see what is taken", async () => {
    const ids = await seedServer(s);
    const create = (domain: string) =>
      s.app.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: { authorization: `Bearer ${s.token}` },
        payload: { ...ids, type: 'static-html', domain, ssl: false, options: {} },
      });
    expect((await create('shape-one.example.com')).statusCode).toBe(202);
    expect(reusesShape(s.storage.db, `lockServer ${TEST_DB} 1`)).toBe(true);
    expect(reusesShape(s.storage.db, 'createContext 1 true true false')).toBe(true);
    expect((await create('shape-two.example.com')).statusCode).toBe(202);
    const again = await create('shape-one.example.com');
    expect(again.statusCode).toBe(422);
    expect(again.json().errors).toContainEqual(expect.objectContaining({ field: 'domain', code: 'domain_taken' }));
    // Another tenant's token does not find the server through the reused lookup.
    const other = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: { authorization: `Bearer ${s.otherTenantToken}` },
      payload: { ...ids, type: 'static-html', domain: 'shape-three.example.com', ssl: false, options: {} },
    });
    expect(other.statusCode).toBe(422);
    expect(JSON.stringify(other.json().errors)).toContain('server');
  });
});

describe(`a dry-run job's statements compiled once per shape on ${TEST_DB}`, () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService();
  });
  afterAll(async () => s?.stop());

  it("reuse their SQL from the second job on, and the second job's steps and resources are recorded as the first's", async () => {
    const ids = await seedServer(s);
    const auth = { authorization: `Bearer ${s.token}` };
    const installed = async (domain: string) => {
      const res = await s.app.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: auth,
        payload: { ...ids, type: 'static-html', domain, ssl: false, options: {} },
      });
      expect(res.statusCode).toBe(202);
      const site = res.json() as { uuid: string; operation: { uuid: string } };
      expect((await waitForStatus(s, site.uuid, ['installed', 'failed'])).status).toBe('installed');
      const op = await s.app.inject({ method: 'GET', url: `/api/v1/operations/${site.operation.uuid}`, headers: auth });
      return op.json() as { status: string; steps: { name: string; status: string; finished_at: string | null }[] };
    };
    const first = await installed('job-shape-one.example.com');
    for (const shape of ['stillHolds', 'startStep', 'finishStep', 'ledgerList', 'updateHeldJob status,lease_until'])
      expect(reusesShape(s.storage.db, shape), shape).toBe(true);
    const second = await installed('job-shape-two.example.com');
    expect(second.status).toBe('succeeded');
    expect(second.steps.map((step) => step.name)).toEqual(first.steps.map((step) => step.name));
    expect(second.steps.every((step) => step.status === 'succeeded' && step.finished_at !== null)).toBe(true);
    const ledgers = await s.storage.db
      .selectFrom('site_resources')
      .innerJoin('sites', 'sites.uuid', 'site_resources.site_uuid')
      .select(['sites.domain', 'site_resources.kind'])
      .orderBy('site_resources.seq')
      .execute();
    const kindsOf = (domain: string) => ledgers.filter((r) => r.domain === domain).map((r) => r.kind);
    expect(kindsOf('job-shape-two.example.com')).toEqual(kindsOf('job-shape-one.example.com'));
    expect(kindsOf('job-shape-two.example.com').length).toBeGreaterThan(0);
  });
});
