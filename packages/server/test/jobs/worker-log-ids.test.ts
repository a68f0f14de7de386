import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { fakeRecipes, seedServer, startTestService, TEST_DB, waitForStatus } from '../support/test-service.js';

describe(`worker log lines carry the job's and the operation's ids, on ${TEST_DB}`, () => {
  it('a failed create logs one line naming its job, operation and kind', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line)) });
    const s = await startTestService({ logger, recipes: fakeRecipes({ failAt: 'nginx' }) });
    try {
      const ids = await seedServer(s);
      const res = await s.app.inject({
        method: 'POST',
        url: '/api/v1/sites',
        headers: { authorization: `Bearer ${s.token}` },
        payload: { ...ids, type: 'static-html', domain: 'logs.example.com', ssl: false, options: {} },
      });
      expect(res.statusCode).toBe(202);
      await waitForStatus(s, res.json().uuid, ['failed']);
      const operation = res.json().operation.uuid as string;
      const job = await s.storage.db
        .selectFrom('jobs')
        .select('uuid')
        .where('operation_uuid', '=', operation)
        .executeTakeFirstOrThrow();
      const failed = lines.find((l) => String(l.msg).includes(`operation ${operation} failed`));
      expect(failed).toMatchObject({ level: 50, job: job.uuid, operation, kind: 'site.create' });
    } finally {
      await s.stop();
    }
  });
});
