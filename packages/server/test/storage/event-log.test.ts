// Issue 12 items 3–4: the per-team change log. Each change of a site's life is one event, written
// in the transaction of the change itself, scoped to the site's team; old events are pruned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventRetention } from '../../src/jobs/event-retention.js';
import { fakeRecipes, seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';

describe(`change log (${TEST_DB}; issue 12)`, () => {
  let s: TestService;
  let ids: { server: string; serverUser: string };
  const auth = { authorization: '' };

  beforeAll(async () => {
    s = await startTestService({ recipes: fakeRecipes({ failAt: 'nginx', failTimes: 1 }) });
    auth.authorization = `Bearer ${s.token}`;
    ids = await seedServer(s);
  });
  afterAll(async () => s?.stop());

  const eventsOf = async (subject?: string) =>
    (await s.storage.db.selectFrom('events').selectAll().orderBy('seq').execute())
      .map((e) => ({ ...e, data: JSON.parse(e.payload) as Record<string, unknown> }))
      .filter((e) => subject === undefined || e.data.site === subject);

  it('records a site failing, being retried, installed and deleted, with each step, in order', async () => {
    const created = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: auth,
      payload: { ...ids, type: 'static-html', domain: 'log.example.com', ssl: false, options: {} },
    });
    expect(created.statusCode, created.body).toBe(202);
    const site = created.json() as { uuid: string; team?: string; operation: { uuid: string } };
    await waitForStatus(s, site.uuid, ['failed']);
    const retried = await s.app.inject({ method: 'POST', url: `/api/v1/sites/${site.uuid}/retry`, headers: auth });
    expect(retried.statusCode, retried.body).toBe(202);
    await waitForStatus(s, site.uuid, ['installed']);
    const deleted = await s.app.inject({ method: 'DELETE', url: `/api/v1/sites/${site.uuid}`, headers: auth });
    expect(deleted.statusCode, deleted.body).toBe(202);
    await waitForStatus(s, site.uuid, ['gone']);

    const events = await eventsOf(site.uuid);
    const team = (
      await s.storage.db.selectFrom('sites').select('team_uuid').where('uuid', '=', site.uuid).executeTakeFirstOrThrow()
    ).team_uuid;
    expect(new Set(events.map((e) => e.team_uuid))).toEqual(new Set([team]));
    const kinds = events.filter((e) => e.kind !== 'operation.step').map((e) => e.kind);
    expect(kinds).toEqual([
      'site.created',
      'operation.finished',
      'site.failed',
      'operation.finished',
      'site.installed',
      'site.deleting',
      'operation.finished',
      'site.deleted',
    ]);
    const created0 = events[0];
    expect(created0).toMatchObject({ kind: 'site.created', subject_uuid: site.uuid });
    expect(created0?.data).toMatchObject({ domain: 'log.example.com', type: 'static-html', operation: site.operation.uuid });
    expect(events.find((e) => e.kind === 'site.failed')?.data).toMatchObject({ step: 'ensure nginx vhost' });
    expect(events.find((e) => e.kind === 'operation.finished')?.data).toMatchObject({ kind: 'create', status: 'failed' });
    // Each step's start and end, the failing one's too, named.
    const steps = events.filter((e) => e.kind === 'operation.step').map((e) => `${e.data.name} ${e.data.status}`);
    expect(steps.slice(0, 4)).toEqual([
      'ensure site directory running',
      'ensure site directory succeeded',
      'ensure nginx vhost running',
      'ensure nginx vhost failed',
    ]);
    // Nothing sealed or secret is in the log.
    expect(JSON.stringify(events)).not.toMatch(/password|secret/i);
  });

  it('a create refused by a rule records no event', async () => {
    const before = (await eventsOf()).length;
    const refused = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: auth,
      payload: { ...ids, type: 'static-html', domain: 'not a domain', ssl: false, options: {} },
    });
    expect(refused.statusCode).toBe(422);
    expect((await eventsOf()).length).toBe(before);
  });

  it('pruning drops only the events older than the retention', async () => {
    const all = await eventsOf();
    expect(all.length).toBeGreaterThan(2);
    const [first, second] = all;
    await s.storage.db
      .updateTable('events')
      .set({ created_at: '2000-01-01T00:00:00.000Z' })
      .where('seq', '=', first?.seq as number)
      .execute();
    const retention = new EventRetention({ db: s.storage.db, clock: { now: () => new Date() }, log: console, retentionDays: 7 });
    expect(await retention.prune()).toBe(1);
    const left = await eventsOf();
    expect(left.length).toBe(all.length - 1);
    expect(String(left[0]?.seq)).toBe(String(second?.seq));
  });
});
