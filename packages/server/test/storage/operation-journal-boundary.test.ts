import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OperationJournal } from '../../src/storage/operation-journal.js';
import { startTestService, TEST_DB, type TestService } from '../support/test-service.js';

describe(`OperationJournal.stepBoundary on ${TEST_DB}: a step's end, the next one's start and the lines in one transaction`, () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService({ env: { SITEPLANE_WORKER: 'off' } });
  });
  afterAll(async () => s?.stop());

  /** A queued create operation of a new site on a dry-run server (the worker is off: nothing runs it). */
  async function operation(): Promise<string> {
    const headers = { authorization: `Bearer ${s.token}` };
    const post = async (url: string, payload: Record<string, unknown>) =>
      (await s.app.inject({ method: 'POST', url, headers, payload })).json() as { uuid: string };
    const server = await post('/api/v1/servers', { name: `j-${Date.now()}`, ip: '127.0.0.1', connection: 'dry-run', facts: {} });
    const user = await post(`/api/v1/servers/${server.uuid}/users`, { username: 'deploy' });
    const site = await post('/api/v1/sites', {
      server: server.uuid,
      serverUser: user.uuid,
      type: 'static-html',
      domain: `j${Date.now()}.example.com`,
      ssl: false,
      options: {},
    });
    const op = await s.storage.db
      .selectFrom('operations')
      .select('uuid')
      .where('site_uuid', '=', site.uuid)
      .executeTakeFirstOrThrow();
    return op.uuid;
  }
  const steps = (op: string) =>
    s.storage.db
      .selectFrom('operation_steps')
      .select(['idx', 'name', 'status'])
      .where('operation_uuid', '=', op)
      .orderBy('idx')
      .execute();
  const lines = async (op: string) =>
    (
      await s.storage.db.selectFrom('operation_logs').select('line').where('operation_uuid', '=', op).orderBy('seq').execute()
    ).map((r) => r.line);

  it('stores the lines logged before it, ends the step that succeeded and starts the next', async () => {
    const op = await operation();
    const journal = await OperationJournal.open(s.storage.db, op, (l) => l);
    journal.log('before the first step');
    expect(await journal.stepBoundary(null, { idx: 0, name: 'first' }, async () => true)).toBe(true);
    expect(await lines(op)).toEqual(['before the first step']);
    expect(await steps(op)).toEqual([{ idx: 0, name: 'first', status: 'running' }]);
    journal.log('during the first step');
    expect(await journal.stepBoundary(0, { idx: 1, name: 'second' }, async () => true)).toBe(true);
    expect(await journal.stepBoundary(1, null, async () => true)).toBe(true);
    expect(await steps(op)).toEqual([
      { idx: 0, name: 'first', status: 'succeeded' },
      { idx: 1, name: 'second', status: 'succeeded' },
    ]);
    expect(await lines(op)).toEqual(['before the first step', 'during the first step']);
  });

  it('when the claim no longer holds: false, no step changed, the lines stored all the same', async () => {
    const op = await operation();
    const journal = await OperationJournal.open(s.storage.db, op, (l) => l);
    await journal.stepBoundary(null, { idx: 0, name: 'first' }, async () => true);
    journal.log('logged by a run that lost its lease');
    expect(await journal.stepBoundary(0, { idx: 1, name: 'second' }, async () => false)).toBe(false);
    expect(await steps(op)).toEqual([{ idx: 0, name: 'first', status: 'running' }]);
    expect(await lines(op)).toEqual(['logged by a run that lost its lease']);
  });

  it('lines logged outside a boundary are written on their own shortly after, and by flush() at once', async () => {
    const op = await operation();
    const journal = await OperationJournal.open(s.storage.db, op, (l) => l);
    journal.log('one');
    journal.log('two');
    await journal.flush();
    expect(await lines(op)).toEqual(['one', 'two']);
    journal.log('three');
    // Written by the journal's timer (25 ms), no flush: waited for generously on a loaded machine.
    for (let i = 0; i < 200 && (await lines(op)).length < 3; i++) await new Promise((r) => setTimeout(r, 25));
    expect(await lines(op)).toEqual(['one', 'two', 'three']);
  });
});
