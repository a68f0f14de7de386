import { expect } from 'vitest';
import type { Harness, JsonBody } from '../sites/support/harness.js';

/**
 * Soketi on a server that reaches only Debian's and npm's registries: soketi depends on
 * uWebSockets.js, which npm fetches from github.com. Unless a reachable source exists, the site
 * fails at its install step with a message naming that dependency (issue 9 item 3).
 */
export const SOKETI_OPTIONS: Record<string, unknown> = {};

export async function expectSoketiOutcome(h: Harness, site: JsonBody): Promise<void> {
  const record = (await h.api('GET', `/api/v1/sites/${site.uuid}`)).body;
  expect(record.status).toBe('failed');
  const operation = await h.operation(site.operation.uuid);
  expect(operation.error?.message).toMatch(/uWebSockets\.js/);
  expect(operation.error?.message).toMatch(/github\.com/);
}
