/**
 * The rules of a version-control profile body (ARCHITECTURE §2 admin surface): every violation
 * answered at once as a 422 with its field's path, before anything is sent to a provider; names
 * unique per team; deletion; scopes. The GitHub stand-in stands for "a provider" and counts what
 * it was asked.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeFixture } from '../standins/vcs/fixture.js';
import { type GitHubStandin, startGitHubStandin } from '../standins/vcs/github-standin.js';
import { LOOPBACK_TARGETS, startTestService, TEST_DB, type TestService } from '../support/test-service.js';
import { call, createProfile } from './vc-api.js';

const fixture = makeFixture();
let standin: GitHubStandin;
let s: TestService;

beforeAll(async () => {
  standin = await startGitHubStandin(fixture);
  s = await startTestService({ env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS } });
});
afterAll(async () => {
  await s?.stop();
  await standin?.server.close();
});

/** POSTs a body that must be refused without a word to any provider; returns its field errors. */
async function refused(payload: Record<string, unknown>) {
  const before = standin.server.requests.length;
  const res = await call(s, 'POST', '/api/v1/vc-profiles', { payload });
  expect(res.statusCode, res.body).toBe(422);
  expect(res.json().code).toBe('validation_failed');
  expect(standin.server.requests.length).toBe(before);
  return (res.json().errors as { field: string; code: string }[]).map(({ field, code }) => ({ field, code }));
}

describe(`version-control profile rules on ${TEST_DB}`, () => {
  it('git profile: every bad remote, duplicate name, token and baseUrl reported in one answer', async () => {
    const errors = await refused({
      provider: 'git',
      name: 'remotes',
      token: 'not-for-git',
      baseUrl: 'https://git.example.com',
      repositories: [
        'https://git.example.com/acme/api.git',
        'ext::sh -c touch% /tmp/pwned',
        'git@git.example.com:acme/api.git', // also acme/api
        '--upload-pack=touch /tmp/x',
        'http://deploy:s3cret@git.example.com/acme/site.git',
        'http://deploy:s3cret@127.0.0.1:9/acme/local.git', // loopback: allowed
        'ftp://git.example.com/acme/web.git',
      ],
    });
    expect(errors).toEqual([
      { field: 'token', code: 'not_allowed' },
      { field: 'baseUrl', code: 'not_allowed' },
      { field: 'repositories.1', code: 'invalid_format' },
      { field: 'repositories.2', code: 'duplicate' },
      { field: 'repositories.3', code: 'invalid_format' },
      { field: 'repositories.4', code: 'insecure_url' },
      { field: 'repositories.6', code: 'invalid_format' },
    ]);
  });

  it('git profile: remotes are required, and at most 100', async () => {
    expect(await refused({ provider: 'git', name: 'none' })).toEqual([{ field: 'repositories', code: 'required' }]);
    expect(await refused({ provider: 'git', name: 'empty', repositories: [] })).toEqual([
      { field: 'repositories', code: 'required' },
    ]);
    const many = Array.from({ length: 101 }, (_, i) => `https://git.example.com/acme/r${i}.git`);
    expect(await refused({ provider: 'git', name: 'many', repositories: many })).toEqual([
      { field: 'repositories', code: 'too_long' },
    ]);
  });

  it('hosted profile: token required and well-formed, no remotes, baseUrl https (http only on loopback)', async () => {
    expect(await refused({ provider: 'gitlab', name: 'x', repositories: ['https://h.example/a/b.git'] })).toEqual([
      { field: 'repositories', code: 'not_allowed' },
      { field: 'token', code: 'required' },
    ]);
    expect(await refused({ provider: 'github', name: 'x', token: 'two words' })).toEqual([
      { field: 'token', code: 'invalid_format' },
    ]);
    expect(await refused({ provider: 'gitea', name: 'x', token: 't0ken', baseUrl: 'http://gitea.example.com' })).toEqual([
      { field: 'baseUrl', code: 'insecure_url' },
    ]);
    expect(
      await refused({ provider: 'gitea', name: 'x', token: 't0ken', baseUrl: 'https://u:p@gitea.example.com/?a=1' }),
    ).toEqual([{ field: 'baseUrl', code: 'invalid_format' }]);
    // The schema's own check: not an http(s) URL at all.
    expect(await refused({ provider: 'gitlab', name: 'x', token: 't0ken', baseUrl: 'ftp://gitlab.example.com' })).toEqual([
      { field: 'baseUrl', code: 'invalid_format' },
    ]);
  });

  it('never echoes a token, even a refused one', async () => {
    const token = 'ghp_visible SECRET-4242';
    const res = await call(s, 'POST', '/api/v1/vc-profiles', { payload: { provider: 'github', name: 'x', token } });
    expect(res.statusCode).toBe(422);
    expect(res.body).not.toContain('SECRET-4242');
  });

  it('a baseUrl where no such API answers is a 422 on baseUrl', async () => {
    // The GitHub stand-in has no Gitea API under /api/v1: the user endpoint is a 404.
    const res = await call(s, 'POST', '/api/v1/vc-profiles', {
      payload: { provider: 'gitea', name: 'wrong-host', token: fixture.token, baseUrl: standin.baseUrl },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([{ field: 'baseUrl', code: 'invalid_value', message: expect.stringContaining('gitea') }]);
  });

  it('names are unique within a team, not across tenants', async () => {
    const body = { provider: 'github', name: 'work', token: fixture.token, baseUrl: standin.baseUrl };
    await createProfile(s, body);
    expect(await refused(body)).toEqual([{ field: 'name', code: 'name_taken' }]);
    expect((await createProfile(s, body, s.otherTenantToken)).account).toBe(fixture.login);
  });

  it('of ten creations with one name at once, exactly one wins; the others are 422 name_taken', async () => {
    const body = { provider: 'github', name: 'raced', token: fixture.token, baseUrl: standin.baseUrl };
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => call(s, 'POST', '/api/v1/vc-profiles', { payload: body })),
    );
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(1);
    for (const a of answers.filter((x) => x.statusCode !== 201)) {
      expect(a.statusCode).toBe(422);
      expect(a.json().errors).toEqual([expect.objectContaining({ field: 'name', code: 'name_taken' })]);
    }
  });

  it('deletes a profile (204), after which it is 404; a read token may list but not create or delete', async () => {
    const created = await createProfile(s, {
      provider: 'github',
      name: 'short-lived',
      token: fixture.token,
      baseUrl: standin.baseUrl,
    });
    const url = `/api/v1/vc-profiles/${created.uuid}`;
    expect((await call(s, 'GET', url, { token: s.readToken })).statusCode).toBe(200);
    expect((await call(s, 'DELETE', url, { token: s.readToken })).statusCode).toBe(403);
    const post = await call(s, 'POST', '/api/v1/vc-profiles', {
      token: s.readToken,
      payload: { provider: 'github', name: 'reader', token: fixture.token, baseUrl: standin.baseUrl },
    });
    expect(post.statusCode).toBe(403);
    expect((await call(s, 'DELETE', url)).statusCode).toBe(204);
    for (const path of [url, `${url}/repos`, `${url}/repos/acme%2Fmonorepo`]) {
      expect((await call(s, 'GET', path)).json()).toMatchObject({ status: 404, code: 'not_found' });
    }
    expect((await call(s, 'DELETE', url)).statusCode).toBe(404);
  });
});
