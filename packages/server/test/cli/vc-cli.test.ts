/**
 * The `siteplane vc` commands as a new user runs them (issue 5 "Done when"): the real CLI
 * (`tsx packages/cli/src/main.ts`, as `npx tsx` runs it) as a child process, through the SDK, against the service
 * listening on 127.0.0.1 and a GitHub Enterprise / GitLab stand-in behind it. Proves a profile
 * lists its repositories and a repository's branches through the CLI, and that failures reach the
 * user as the service's problem code with a non-zero exit.
 */
import { execFile } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIG_BRANCH_COUNT, fullName, makeFixture, REPO_COUNT } from '../standins/vcs/fixture.js';
import { type GitHubStandin, startGitHubStandin } from '../standins/vcs/github-standin.js';
import { type GitLabStandin, startGitLabStandin } from '../standins/vcs/gitlab-standin.js';
import { LOOPBACK_TARGETS, startTestService, type TestService } from '../support/test-service.js';

const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** What `npx tsx` runs, without npx's own start-up (seconds on a busy machine). */
const TSX = join(ROOT, 'node_modules', '.bin', 'tsx');
const github = makeFixture();
const gitlab = makeFixture({ nested: true });
let githubStandin: GitHubStandin;
let gitlabStandin: GitLabStandin;
let s: TestService;
let url: string;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** `siteplane <args>` with SITEPLANE_URL/SITEPLANE_TOKEN set, `stdin` piped in; never rejects. */
function siteplane(args: string[], stdin?: string, token = s.token): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      TSX,
      ['packages/cli/src/main.ts', ...args],
      { cwd: ROOT, env: { ...process.env, SITEPLANE_URL: url, SITEPLANE_TOKEN: token }, timeout: 60_000 },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin?.end(stdin ?? '');
  });
}

function json<T>(run: Run): T {
  if (run.code !== 0) throw new Error(`exit ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as T;
}

beforeAll(async () => {
  githubStandin = await startGitHubStandin(github);
  gitlabStandin = await startGitLabStandin(gitlab);
  s = await startTestService({ env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS } });
  await s.app.listen({ port: 0, host: '127.0.0.1' });
  url = `http://127.0.0.1:${(s.app.server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await s?.stop();
  await githubStandin?.server.close();
  await gitlabStandin?.server.close();
});

describe('siteplane vc (CLI → SDK → service on 127.0.0.1 → provider stand-in)', { timeout: 120_000 }, () => {
  it('adds a GitHub profile (token on stdin), lists it, its repositories and all branches of one', async () => {
    const added = json<{ uuid: string; account: string }>(
      await siteplane(['vc', 'add', 'github', 'work', '--token-stdin', '--base-url', githubStandin.baseUrl], `${github.token}\n`),
    );
    expect(added.account).toBe(github.login);

    const [profiles, repos, repo, missing] = await Promise.all([
      siteplane(['vc', 'list']),
      siteplane(['vc', 'repos', 'work']), // by the profile's name
      siteplane(['vc', 'repo', added.uuid, fullName(github.big)]),
      siteplane(['vc', 'repo', added.uuid, 'acme/nope']),
    ]);
    expect(json<{ uuid: string }[]>(profiles).map((p) => p.uuid)).toEqual([added.uuid]);
    expect(profiles.stdout).not.toContain(github.token);
    // The SDK followed every page of the service's list (100 a page) to the end.
    const names = json<{ name: string }[]>(repos).map((r) => r.name);
    expect(names).toHaveLength(REPO_COUNT);
    expect(new Set(names)).toEqual(new Set(github.repos.map(fullName)));
    const detail = json<{ default_branch: string; branches: { name: string }[] }>(repo);
    expect(detail.default_branch).toBe('trunk');
    expect(detail.branches).toHaveLength(BIG_BRANCH_COUNT);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('404 repository_not_found');

    const removed = await siteplane(['vc', 'remove', added.uuid]);
    expect(removed).toMatchObject({ code: 0, stdout: '' });
    const [gone, unnamed] = await Promise.all([siteplane(['vc', 'get', added.uuid]), siteplane(['vc', 'get', 'work'])]);
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain('No version-control profile named "work"');
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain('404 not_found');
  });

  it('opens a GitLab project in nested groups by its full path', async () => {
    const added = json<{ uuid: string }>(
      await siteplane(['vc', 'add', 'gitlab', 'groups', '--token', gitlab.token, '--base-url', gitlabStandin.baseUrl]),
    );
    const deep = gitlab.repos.find((r) => r.path.length === 4);
    const repo = json<{ name: string; default_branch: string; branches: { name: string }[] }>(
      await siteplane(['vc', 'repo', added.uuid, fullName(deep ?? gitlab.big)]),
    );
    expect(repo).toMatchObject({ name: fullName(deep ?? gitlab.big), default_branch: 'main' });
    expect(repo.branches.map((b) => b.name)).toEqual(['main', 'develop']);
  });

  it('exits 1 with the problem code: a refused token, a read-only token', async () => {
    const [refused, readOnly] = await Promise.all([
      siteplane(['vc', 'add', 'github', 'bad', '--token', 'sp-not-the-token-0000', '--base-url', githubStandin.baseUrl]),
      siteplane(
        ['vc', 'add', 'github', 'ro', '--token', github.token, '--base-url', githubStandin.baseUrl],
        undefined,
        s.readToken,
      ),
    ]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/\(422 validation_failed\): [^\n]*\n {2}token: GitHub rejected the credentials/);
    expect(refused.stderr).not.toContain('sp-not-the-token-0000');
    expect(readOnly.code).toBe(1);
    expect(readOnly.stderr).toContain('403 forbidden');
  });
});
