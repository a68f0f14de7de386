import { readFileSync } from 'node:fs';
import { ERROR_CODES, FIELD_CODES, SITE_TYPE_IDS, SITE_TYPES } from '@siteplane/contract';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultRecipes } from '../../src/app/recipes.js';
import { STATUS_OF } from '../../src/http/problem.js';
import { seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';

/**
 * The user guide's promises: every example on docs/site-types.md is a body the service accepts and
 * installs (on a dry-run server, through the real recipes), every type has one, and
 * docs/errors-and-statuses.md names every problem code with its real status and every field code.
 */
const guide = readFileSync(new URL('../../../../docs/site-types.md', import.meta.url), 'utf8');
const errorsPage = readFileSync(new URL('../../../../docs/errors-and-statuses.md', import.meta.url), 'utf8');

/** Each `## <display name>` section's JSON example. */
function examples(): { section: string; body: Record<string, unknown> }[] {
  const found: { section: string; body: Record<string, unknown> }[] = [];
  for (const part of guide.split(/^## /m).slice(1)) {
    const section = part.slice(0, part.indexOf('\n')).trim();
    const block = /```json\n([\s\S]*?)```/.exec(part);
    if (block?.[1]) found.push({ section, body: JSON.parse(block[1]) });
  }
  return found;
}

describe('docs/site-types.md: one working example per site type', () => {
  const all = examples();

  it('has one example per type, in the section of its display name', () => {
    const sections = new Map(all.map((e) => [e.section, e.body.type]));
    for (const id of SITE_TYPE_IDS) {
      expect(sections.has(SITE_TYPES[id].displayName), `no example for ${SITE_TYPES[id].displayName}`).toBe(true);
    }
    expect(all).toHaveLength(SITE_TYPE_IDS.length);
  });

  describe(`every example is accepted and installs (${TEST_DB})`, () => {
    let s: TestService;
    let ids: { server: string; serverUser: string };
    beforeAll(async () => {
      s = await startTestService({ recipes: defaultRecipes, env: { FREE_DOMAIN_BASE: 'preview.example.net' } });
      ids = await seedServer(s, { php: [], node: null });
    });
    afterAll(async () => s?.stop());

    for (const { section, body } of all) {
      it(section, async () => {
        const payload = JSON.parse(
          JSON.stringify(body).replaceAll('<server-uuid>', ids.server).replaceAll('<user-uuid>', ids.serverUser),
        );
        const res = await s.app.inject({
          method: 'POST',
          url: '/api/v1/sites',
          headers: { authorization: `Bearer ${s.token}` },
          payload,
        });
        expect(res.statusCode, res.body).toBe(202);
        const site = res.json();
        const expected = Object.values(SITE_TYPES).find((t) => t.displayName === section)?.id;
        expect(site.type).toBe(expected);
        const done = await waitForStatus(s, site.uuid, ['installed', 'failed'], 20_000);
        expect(done.status, JSON.stringify(done.failure)).toBe('installed');
      });
    }
  });
});

describe('docs/errors-and-statuses.md names every code', () => {
  it('every problem code, with the status the service answers it with', () => {
    for (const code of Object.keys(ERROR_CODES) as (keyof typeof ERROR_CODES)[]) {
      const row = errorsPage.split('\n').find((line) => line.startsWith(`| \`${code}\` |`));
      expect(row, `${code} is not in the table of problem codes`).toBeDefined();
      expect(row?.split('|')[2]?.trim(), `${code}'s status`).toBe(String(STATUS_OF[code]));
    }
  });

  it('every field code', () => {
    for (const code of FIELD_CODES) expect(errorsPage, `${code} is not explained`).toContain(`\`${code}\``);
  });
});
