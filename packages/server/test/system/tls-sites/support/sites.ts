/** Sites of the suite: created through the API, followed to the end of their certificate operation. */
import { expect } from 'vitest';
import { type Json, waitForOperation, waitForOperationUuid } from '../../../tls/support.js';
import type { TlsSuite } from './suite.js';

export interface Ids {
  server: string;
  serverUser: string;
}

/** Every site a suite created, deleted at its end (the machine's nginx must not keep them). */
export const created: { suite: TlsSuite; uuid: string }[] = [];

export async function createSite(
  suite: TlsSuite,
  payload: Record<string, unknown>,
): Promise<{ uuid: string; domain: string; body: Json }> {
  const res = await suite.api('POST', '/api/v1/sites', { type: 'static-html', options: {}, ...payload });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  created.push({ suite, uuid: res.body.uuid });
  return { uuid: res.body.uuid, domain: res.body.domain, body: res.body };
}

export const tlsSite = (ids: Ids, domain: string, provider: 'letsencrypt' | 'zerossl' = 'letsencrypt') => ({
  ...ids,
  domain,
  ssl: true,
  sslProvider: provider,
  sslEmail: 'ops@example.com',
});

/** Waits for the site's certificate operation; returns it with the site as it is then. */
export async function certificateOutcome(suite: TlsSuite, uuid: string, timeoutMs = 60_000) {
  const op = await waitForOperation(suite, uuid, 'ssl', timeoutMs);
  const site = (await suite.api('GET', `/api/v1/sites/${uuid}`)).body;
  return { op, site };
}

export const logOf = (op: { logs: { line: string }[] }) => op.logs.map((l) => l.line).join('\n');

/** Deletes the sites a suite created (all at once: jobs of different sites run side by side). */
export async function deleteSites(suite: TlsSuite, uuids: string[]): Promise<string[]> {
  const problems: string[] = [];
  const ops = await Promise.all(
    uuids.map(async (uuid) => {
      const res = await suite.api('DELETE', `/api/v1/sites/${uuid}`);
      if (res.status === 404) return null; // deleted already (by its test)
      if (res.status === 202) return res.body.operation.uuid as string;
      problems.push(`${uuid}: ${res.status}`);
      return null;
    }),
  );
  for (const op of ops) {
    if (!op) continue;
    const done = await waitForOperationUuid(suite, op, 60_000);
    if (done.status !== 'succeeded') problems.push(`${op}: ${JSON.stringify(done.error)}`);
  }
  return problems;
}
