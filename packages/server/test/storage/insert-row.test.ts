import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRow } from '../../src/storage/insert-row.js';
import { startTestService, TEST_DB, type TestService } from '../support/test-service.js';

describe(`insertRow on ${TEST_DB}: Kysely's insert SQL compiled once per shape`, () => {
  let s: TestService;
  beforeAll(async () => {
    s = await startTestService({ env: { SITEPLANE_WORKER: 'off' } });
  });
  afterAll(async () => s?.stop());
  const read = (uuid: string) => s.storage.db.selectFrom('accounts').selectAll().where('uuid', '=', uuid).executeTakeFirst();

  it('writes each row with its own values, also when the same shape comes again', async () => {
    const rows = Array.from({ length: 3 }, (_, i) => ({
      uuid: randomUUID(),
      name: `acct-${i}-${randomUUID()}`,
      created_at: `2026-01-0${i + 1}`,
    }));
    for (const row of rows) await insertRow(s.storage.db, 'accounts', row);
    for (const row of rows) expect(await read(row.uuid)).toEqual(row);
  });

  it('inside a transaction, rolled back with it', async () => {
    const row = { uuid: randomUUID(), name: `rolled-${randomUUID()}`, created_at: '2026-02-01' };
    await expect(
      s.storage.db.transaction().execute(async (trx) => {
        await insertRow(trx, 'accounts', row);
        expect(await trx.selectFrom('accounts').select('uuid').where('uuid', '=', row.uuid).executeTakeFirst()).toBeTruthy();
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    expect(await read(row.uuid)).toBeUndefined();
  });

  it('a value that is an expression goes through the builder, also after plain rows of that shape', async () => {
    const uuid = randomUUID();
    await insertRow(s.storage.db, 'accounts', {
      uuid,
      name: sql<string>`${'expr-'} || ${uuid}` as unknown as string,
      created_at: '2026-03-01',
    });
    await insertRow(s.storage.db, 'accounts', {
      uuid: randomUUID(),
      name: sql<string>`${'again-'} || ${uuid}` as unknown as string,
      created_at: '2026-03-02',
    });
    expect((await read(uuid))?.name).toBe(`expr-${uuid}`);
  });

  it('a unique violation surfaces as the driver error, as from the builder', async () => {
    const row = { uuid: randomUUID(), name: `dup-${randomUUID()}`, created_at: '2026-04-01' };
    await insertRow(s.storage.db, 'accounts', row);
    await expect(insertRow(s.storage.db, 'accounts', { ...row, uuid: randomUUID() })).rejects.toThrow(/unique|UNIQUE/);
  });
});
