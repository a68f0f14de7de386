/**
 * Version-control profiles of every hosted provider through the API (spec §4.2, issue 5): the real
 * provider code, unchanged, against each provider's stand-in on loopback, reached through the
 * profile's baseUrl. A new user's path (create, list, page, open one repository) and every failure
 * the provider can cause, each answering with its own code.
 */
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIG_BRANCH_COUNT, type FixtureRepo, fullName, makeFixture, type VcsFixture } from '../standins/vcs/fixture.js';
import { closedPort } from '../standins/vcs/standin-server.js';
import { LOOPBACK_TARGETS, startTestService, TEST_DB, type TestService } from '../support/test-service.js';
import { call, createProfile, HOSTED_CASES, type HostedStandin, type ListedRepo, readAllPages } from './vc-api.js';

function expectProblem(res: LightMyRequestResponse, status: number, code: string, secret: string) {
  expect({ status: res.statusCode, body: res.json() }).toMatchObject({ status, body: { status, code } });
  expect(res.headers['content-type']).toContain('application/problem+json');
  expect(res.body).not.toContain(secret);
}

describe.each(HOSTED_CASES)(`$provider profile through the API on ${TEST_DB}`, (c) => {
  let fixture: VcsFixture;
  let standin: HostedStandin;
  let s: TestService;
  let profile: string;
  const base = `/api/v1/vc-profiles`;
  /** A repository no test has opened yet, so no cache stands between the request and the stand-in. */
  let unopened: FixtureRepo[];
  const takeUnopened = () => fullName(unopened.shift() as FixtureRepo);

  beforeAll(async () => {
    fixture = makeFixture({ nested: c.nested });
    standin = await c.start(fixture);
    s = await startTestService({ env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS } });
    profile = (await createProfile(s, { provider: c.provider, name: 'main', token: fixture.token, baseUrl: standin.baseUrl }))
      .uuid;
    unopened = fixture.repos.filter((repo) => repo !== fixture.big);
  });
  afterAll(async () => {
    await s?.stop();
    await standin?.server.close();
  });

  it('creates a profile: token checked at the provider, account shown, token never returned nor stored in clear', async () => {
    const before = standin.server.requests.length;
    const res = await call(s, 'POST', base, {
      payload: { provider: c.provider, name: 'second', token: fixture.token, baseUrl: `${standin.baseUrl}/` },
    });
    expect(res.statusCode).toBe(201);
    const record = res.json();
    expect(Object.keys(record).sort()).toEqual(['account', 'base_url', 'created_at', 'name', 'provider', 'team', 'uuid']);
    expect(record).toMatchObject({ provider: c.provider, name: 'second', base_url: standin.baseUrl, account: fixture.login });
    // The check reached the provider with the token.
    expect(standin.server.requests.length).toBeGreaterThan(before);
    const [fetched, listed] = await Promise.all([call(s, 'GET', `${base}/${record.uuid}`), call(s, 'GET', base)]);
    expect(fetched.json()).toEqual(record);
    for (const body of [res.body, fetched.body, listed.body]) expect(body).not.toContain(fixture.token);
    const row = await s.storage.db
      .selectFrom('vc_profiles')
      .selectAll()
      .where('uuid', '=', record.uuid)
      .executeTakeFirstOrThrow();
    expect(row.token_enc).not.toContain(fixture.token);
    expect(s.useCases.secrets.open(row.token_enc ?? '')).toBe(fixture.token);
  });

  it('refuses a token the provider rejects: 422 on `token`, nothing stored, the token not echoed', async () => {
    const wrong = 'sp-wrong-token-5e4d3c2b1a';
    const res = await call(s, 'POST', base, {
      payload: { provider: c.provider, name: 'bad', token: wrong, baseUrl: standin.baseUrl },
    });
    expectProblem(res, 422, 'validation_failed', wrong);
    expect(res.json().errors).toEqual([{ field: 'token', code: 'provider_auth_failed', message: expect.any(String) }]);
    const names = (await call(s, 'GET', base)).json().data.map((p: { name: string }) => p.name);
    expect(names).not.toContain('bad');
  });

  it('lists every repository in the list envelope, ordered by name, paged by ?limit and the cursor', async () => {
    const pages = await readAllPages(s, `${base}/${profile}/repos?limit=100`);
    const all = pages.flatMap((page) => page.data);
    const expected = fixture.repos.map(fullName).sort((a, b) => (a < b ? -1 : 1));
    expect(all.map((r) => r.name)).toEqual(expected);
    expect(pages.map((page) => page.data.length)).toEqual([100, 100, expected.length - 200]);
    for (const [i, page] of pages.entries()) {
      expect(page.meta.limit).toBe(100);
      const last = i === pages.length - 1;
      expect(page.meta.next_cursor === null).toBe(last);
      expect(page.link === undefined).toBe(last);
    }
    const big = all.find((r) => r.name === fullName(fixture.big)) as ListedRepo;
    expect(big).toEqual({
      name: fullName(fixture.big),
      default_branch: 'trunk',
      private: true,
      web_url: expect.stringMatching(/^http/),
    });
    // Without ?limit the page holds 100; a cursor this service did not issue is a 400.
    expect((await call(s, 'GET', `${base}/${profile}/repos`)).json().data).toHaveLength(100);
    const bad = await call(s, 'GET', `${base}/${profile}/repos?cursor=bm9wZQ`);
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({ code: 'invalid_query', errors: [{ field: 'cursor', code: 'invalid_format' }] });
  });

  it('asks the provider once when the list is read twice within the cache TTL', async () => {
    const fresh = await createProfile(s, { provider: c.provider, name: 'cache', token: fixture.token, baseUrl: standin.baseUrl });
    const start = standin.server.requests.length;
    const first = await readAllPages(s, `${base}/${fresh.uuid}/repos?limit=500`);
    const providerPages = standin.server.requests.length - start;
    expect(providerPages).toBeGreaterThan(1); // all of the provider's pages were read for the first listing
    const second = await readAllPages(s, `${base}/${fresh.uuid}/repos?limit=500`);
    expect(second).toEqual(first);
    expect(standin.server.requests.length - start).toBe(providerPages);
  });

  it(`returns one repository by %2F-encoded and literal name, with default_branch and all ${BIG_BRANCH_COUNT} branches`, async () => {
    const name = fullName(fixture.big);
    const encoded = await call(s, 'GET', `${base}/${profile}/repos/${encodeURIComponent(name)}`);
    expect(encoded.statusCode).toBe(200);
    const repo = encoded.json();
    expect(repo).toMatchObject({ name, default_branch: 'trunk', private: true });
    expect(repo.branches).toHaveLength(BIG_BRANCH_COUNT);
    const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : 1);
    expect([...repo.branches].sort(byName)).toEqual(
      fixture.big.branches.map((b) => ({ name: b.name, commit: b.sha })).sort(byName),
    );
    const literal = await call(s, 'GET', `${base}/${profile}/repos/${name}`);
    expect(literal.json()).toEqual(repo);
  });

  if (c.nested) {
    it('addresses a project in nested groups (a/b/c/d) encoded, literal and with a trailing slash', async () => {
      const deep = unopened.find((repo) => repo.path.length === 4) as FixtureRepo;
      unopened = unopened.filter((repo) => repo !== deep);
      const name = fullName(deep);
      for (const path of [encodeURIComponent(name), name, `${name}/`]) {
        const res = await call(s, 'GET', `${base}/${profile}/repos/${path}`);
        expect(res.statusCode, path).toBe(200);
        expect(res.json()).toMatchObject({ name, default_branch: 'main', branches: [{ name: 'main' }, { name: 'develop' }] });
      }
    });
  }

  it('answers 404 repository_not_found for a repository the provider does not have, and not_found for no profile', async () => {
    const owner = fixture.big.path.slice(0, -1).join('/');
    for (const name of [`${owner}/does-not-exist`, 'no-owner', '..%2F..%2Fuser', 'a%25zz']) {
      expectProblem(await call(s, 'GET', `${base}/${profile}/repos/${name}`), 404, 'repository_not_found', fixture.token);
    }
    const missing = await call(s, 'GET', `${base}/00000000-0000-4000-8000-000000000000/repos/a%2Fb`);
    expectProblem(missing, 404, 'not_found', fixture.token);
  });

  it('answers 424 provider_auth_failed once the provider no longer accepts the stored token', async () => {
    const stored = fixture.token;
    fixture.token = 'revoked-at-the-provider-1234';
    try {
      const res = await call(s, 'GET', `${base}/${profile}/repos/${encodeURIComponent(takeUnopened())}`);
      expectProblem(res, 424, 'provider_auth_failed', stored);
    } finally {
      fixture.token = stored;
    }
  });

  it("answers 429 provider_rate_limited with Retry-After from the provider's reset", async () => {
    standin.budget.limit(0, 120);
    try {
      const res = await call(s, 'GET', `${base}/${profile}/repos/${encodeURIComponent(takeUnopened())}`);
      expectProblem(res, 429, 'provider_rate_limited', fixture.token);
      const retryAfter = Number(res.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(c.retryAfter.min);
      expect(retryAfter).toBeLessThanOrEqual(c.retryAfter.max);
    } finally {
      standin.budget.clear();
    }
  });

  it('answers 503 provider_unreachable when nothing answers, at creation and later', async () => {
    const port = await closedPort();
    const atCreation = await call(s, 'POST', base, {
      payload: { provider: c.provider, name: 'nowhere', token: fixture.token, baseUrl: `http://127.0.0.1:${port}` },
    });
    expectProblem(atCreation, 503, 'provider_unreachable', fixture.token);
    const shortLived = await c.start(fixture);
    const created = await createProfile(s, {
      provider: c.provider,
      name: 'gone',
      token: fixture.token,
      baseUrl: shortLived.baseUrl,
    });
    await shortLived.server.close();
    expectProblem(await call(s, 'GET', `${base}/${created.uuid}/repos`), 503, 'provider_unreachable', fixture.token);
  });

  it("keeps a profile within its tenant: another tenant's token gets 404 everywhere", async () => {
    const other = { token: s.otherTenantToken };
    for (const url of [
      `${base}/${profile}`,
      `${base}/${profile}/repos`,
      `${base}/${profile}/repos/${encodeURIComponent(fullName(fixture.big))}`,
    ]) {
      expectProblem(await call(s, 'GET', url, other), 404, 'not_found', fixture.token);
    }
    expectProblem(await call(s, 'DELETE', `${base}/${profile}`, other), 404, 'not_found', fixture.token);
    expect((await call(s, 'GET', base, other)).json().data).toEqual([]);
    expect((await call(s, 'GET', `${base}/${profile}`)).statusCode).toBe(200);
  });
});
