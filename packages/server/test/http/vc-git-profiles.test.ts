/**
 * `git` profiles through the API (ARCHITECTURE §2: remotes listed in the profile, named after the
 * last two path segments) against real repositories on loopback: `git daemon` (git://) and
 * `git http-backend` (smart HTTP, one of them behind Basic auth). Every server is started here and
 * stopped by its handle or PID.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GitDaemon, startGitDaemon } from '../standins/vcs/git-daemon.js';
import { type GitHttpBackend, startGitHttpBackend } from '../standins/vcs/git-http-backend.js';
import { createGitRepos, GIT_BIG_BRANCHES, type GitFixtureRepo } from '../standins/vcs/git-repos.js';
import { closedPort } from '../standins/vcs/standin-server.js';
import { LOOPBACK_TARGETS, startTestService, TEST_DB, type TestService } from '../support/test-service.js';
import { call, createProfile, readAllPages } from './vc-api.js';

const PASSWORD = 'hunter2-but-longer-77';
let dir: string;
let repos: GitFixtureRepo[];
let daemon: GitDaemon;
let http: GitHttpBackend;
let guarded: GitHttpBackend;
let s: TestService;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'siteplane-vc-api-git-'));
  const root = join(dir, 'srv');
  repos = await createGitRepos(root);
  daemon = await startGitDaemon(root);
  http = await startGitHttpBackend(root);
  guarded = await startGitHttpBackend(root, { user: 'deploy', password: PASSWORD });
  s = await startTestService({ env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS } });
});
afterAll(async () => {
  await s?.stop();
  await daemon?.stop();
  await http?.close();
  await guarded?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const big = () => repos[0] as GitFixtureRepo;

describe(`git profiles through the API on ${TEST_DB}`, () => {
  it('lists the remotes of a git daemon with their default branches, and one with all its branches', async () => {
    const profile = await createProfile(s, {
      provider: 'git',
      name: 'daemon',
      repositories: repos.map((r) => `${daemon.origin}/${r.relativePath}`),
    });
    expect(profile).toMatchObject({ provider: 'git', base_url: null, account: null });
    const listed = (await readAllPages(s, `/api/v1/vc-profiles/${profile.uuid}/repos`)).flatMap((page) => page.data);
    expect(listed).toEqual(
      [...repos]
        .sort((a, b) => (a.name < b.name ? -1 : 1))
        .map((r) => ({ name: r.name, default_branch: r.head, private: null, web_url: null })),
    );
    for (const path of [encodeURIComponent(big().name), big().name]) {
      const res = await call(s, 'GET', `/api/v1/vc-profiles/${profile.uuid}/repos/${path}`);
      expect(res.statusCode).toBe(200);
      const detail = res.json();
      expect(detail.default_branch).toBe('trunk');
      expect(detail.branches).toHaveLength(GIT_BIG_BRANCHES);
      expect(new Set(detail.branches.map((b: { name: string; commit: string }) => `${b.name} ${b.commit}`))).toEqual(
        new Set(big().branches.map((b) => `${b.name} ${b.commit}`)),
      );
    }
    const missing = await call(s, 'GET', `/api/v1/vc-profiles/${profile.uuid}/repos/acme%2Fnot-listed`);
    expect(missing.json()).toMatchObject({ status: 404, code: 'repository_not_found' });
  });

  it('pages a git profile with ?limit like any list', async () => {
    const profile = await createProfile(s, {
      provider: 'git',
      name: 'paged',
      repositories: repos.map((r) => `${http.origin}/${r.relativePath}`),
    });
    const pages = await readAllPages(s, `/api/v1/vc-profiles/${profile.uuid}/repos?limit=2`);
    expect(pages.map((page) => page.data.map((r) => r.name))).toEqual([['acme/api', 'acme/monorepo'], ['octo-org/site']]);
  });

  it('reads each remote once while its answer is fresh (git http-backend counts the requests)', async () => {
    const profile = await createProfile(s, {
      provider: 'git',
      name: 'cached',
      repositories: [`${http.origin}/${big().relativePath}`],
    });
    const afterCreate = http.requests;
    const first = await call(s, 'GET', `/api/v1/vc-profiles/${profile.uuid}/repos`);
    const detail = await call(s, 'GET', `/api/v1/vc-profiles/${profile.uuid}/repos/${encodeURIComponent(big().name)}`);
    const again = await call(s, 'GET', `/api/v1/vc-profiles/${profile.uuid}/repos`);
    expect([first.statusCode, detail.statusCode, again.statusCode]).toEqual([200, 200, 200]);
    expect(again.json()).toEqual(first.json());
    // The creation check already read the remote; list, detail and list again are served from it.
    expect(http.requests).toBe(afterCreate);
  });

  it('takes credentials in the URL and never returns them', async () => {
    const url = `${guarded.origin}/${big().relativePath}`.replace('http://', `http://deploy:${PASSWORD}@`);
    const res = await call(s, 'POST', '/api/v1/vc-profiles', {
      payload: { provider: 'git', name: 'guarded', repositories: [url] },
    });
    expect(res.statusCode).toBe(201);
    const repo = await call(s, 'GET', `/api/v1/vc-profiles/${res.json().uuid}/repos/acme%2Fmonorepo`);
    expect(repo.json().branches).toHaveLength(GIT_BIG_BRANCHES);
    for (const body of [res.body, repo.body]) expect(body).not.toContain(PASSWORD);
  });

  it('refuses, in one 422, every remote that is missing or turns the credentials down', async () => {
    const wrong = `${guarded.origin}/${big().relativePath}`.replace('http://', 'http://deploy:wrong-password-0@');
    const res = await call(s, 'POST', '/api/v1/vc-profiles', {
      payload: {
        provider: 'git',
        name: 'half-broken',
        repositories: [`${daemon.origin}/acme/api.git`, `${daemon.origin}/acme/gone.git`, wrong],
      },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors.map(({ field, code }: { field: string; code: string }) => ({ field, code }))).toEqual([
      { field: 'repositories.1', code: 'repository_not_found' },
      { field: 'repositories.2', code: 'provider_auth_failed' },
    ]);
    expect(res.body).not.toContain('wrong-password-0');
  });

  it('answers 503 provider_unreachable when a remote cannot be reached at creation', async () => {
    const res = await call(s, 'POST', '/api/v1/vc-profiles', {
      payload: { provider: 'git', name: 'nowhere', repositories: [`git://127.0.0.1:${await closedPort()}/acme/api.git`] },
    });
    expect(res.json()).toMatchObject({ status: 503, code: 'provider_unreachable' });
  });
});
