/**
 * Plain git provider against real repositories on loopback: `git http-backend` (smart HTTP, also
 * behind Basic auth) and `git daemon` (git://) (spec §4.2; ARCHITECTURE §2 git profiles); file://
 * is refused. Every server is started here and stopped by PID/handle in afterAll.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVcsProvider } from '../../src/vcs/create-vcs-provider.js';
import type { VcsProvider } from '../../src/vcs/provider.js';
import { type GitDaemon, startGitDaemon } from '../standins/vcs/git-daemon.js';
import { type GitHttpBackend, startGitHttpBackend } from '../standins/vcs/git-http-backend.js';
import { createGitRepos, type GitFixtureRepo } from '../standins/vcs/git-repos.js';
import { closedPort } from '../standins/vcs/standin-server.js';
import { expectKind, vcsContract } from './contract.js';

const PASSWORD = 's3cret-pass-4711';
let dir: string;
let root: string;
let repos: GitFixtureRepo[];
let daemon: GitDaemon;
let http: GitHttpBackend;
let guarded: GitHttpBackend;
let port: number;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'siteplane-vcs-git-'));
  root = join(dir, 'srv');
  repos = await createGitRepos(root);
  daemon = await startGitDaemon(root);
  http = await startGitHttpBackend(root);
  guarded = await startGitHttpBackend(root, { user: 'deploy', password: PASSWORD });
  port = await closedPort();
});

afterAll(async () => {
  await daemon?.stop();
  await http?.close();
  await guarded?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const git = (repositories: string[], timeoutMs?: number): VcsProvider =>
  createVcsProvider({ provider: 'git', baseUrl: null, token: null, repositories }, { timeoutMs });
const big = () => repos[0] as GitFixtureRepo;

describe('git provider over smart HTTP (git http-backend)', () => {
  vcsContract(
    () => ({
      provider: (now) =>
        createVcsProvider(
          { provider: 'git', baseUrl: null, token: null, repositories: repos.map((r) => `${http.origin}/${r.relativePath}`) },
          { now },
        ),
      unreachableProvider: () => git(repos.map((r) => `http://127.0.0.1:${port}/${r.relativePath}`)),
      secrets: [PASSWORD],
      account: null,
      expected: {
        names: repos.map((r) => r.name),
        big: { name: big().name, defaultBranch: big().head, branches: big().branches },
        missingName: 'acme/does-not-exist',
      },
      knowsVisibility: false,
      requestCount: () => http.requests,
    }),
    { hosted: false },
  );

  it('reads credentials from the URL, and reports wrong or missing ones as auth_failed without the password', async () => {
    const url = `${guarded.origin}/acme/api.git`;
    const withCredentials = git([url.replace('http://', `http://deploy:${PASSWORD}@`)]);
    expect(await withCredentials.getRepository('acme/api')).toMatchObject({
      default_branch: 'main',
      branches: expect.any(Array),
    });
    await expectKind(git([url.replace('http://', 'http://deploy:wrong-password-1@')]).listRepositories(), 'auth_failed', [
      'wrong-password-1',
    ]);
    // No credentials and prompts disabled: fails at once instead of waiting for a terminal.
    await expectKind(git([url]).whoami(), 'auth_failed', [PASSWORD]);
  });
});

describe('git provider over git:// (git daemon)', () => {
  it('lists and details repositories served by git daemon', async () => {
    const provider = git(repos.map((r) => `${daemon.origin}/${r.relativePath}`));
    const listed = await provider.listRepositories();
    expect(listed.map((r) => [r.name, r.default_branch])).toEqual(repos.map((r) => [r.name, r.head]));
    const detail = await provider.getRepository(big().name);
    expect(detail.default_branch).toBe('trunk');
    expect(detail.branches).toHaveLength(250);
    expect(new Set(detail.branches.map((b) => `${b.name} ${b.commit}`))).toEqual(
      new Set(big().branches.map((b) => `${b.name} ${b.commit}`)),
    );
  });

  it("refuses a file:// remote: the control plane's own disk is no tenant's repository", () => {
    const site = repos[2] as GitFixtureRepo;
    expect(() => git([`file://${join(root, site.relativePath)}`])).toThrow(/not a supported git remote URL/);
  });

  it('fails the whole list, as not_found, when one listed remote does not exist', async () => {
    const provider = git([`${daemon.origin}/acme/api.git`, `${daemon.origin}/acme/gone.git`]);
    await expectKind(provider.listRepositories(), 'not_found', []);
  });

  it('checks every remote in whoami: one unreachable remote fails it', async () => {
    expect(await git([`${daemon.origin}/acme/api.git`]).whoami()).toEqual({ account: null });
    await expectKind(git([`${daemon.origin}/acme/api.git`, `git://127.0.0.1:${port}/acme/api.git`]).whoami(), 'unreachable', []);
  });

  it('gives up on a server that accepts but never answers, within the timeout', async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    const silentPort = typeof address === 'object' && address ? address.port : 0;
    try {
      const started = Date.now();
      await expectKind(git([`git://127.0.0.1:${silentPort}/acme/api.git`], 700).listRepositories(), 'unreachable', []);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('refuses remotes that are not plain git URLs, such as the ext:: transport', () => {
    expect(() => git(['ext::sh -c touch% /tmp/siteplane-pwned'])).toThrow(/not a supported git remote URL/);
    expect(() => git(['--upload-pack=touch /tmp/x'])).toThrow(/not a supported git remote URL/);
  });
});
