/**
 * GitHub Enterprise Server's REST API v3 (docs.github.com/rest), laid out as GHES serves it under
 * `/api/v3`: `GET /user`, `GET /user/repos` (per_page default 30, max 100, `Link` paging),
 * `GET /repos/{owner}/{repo}`, `GET /repos/{owner}/{repo}/branches`. Bearer or `token` auth; a bad
 * token is 401 "Bad credentials"; private repositories are 404 to others. Every answer carries the
 * `x-ratelimit-*` headers; an exhausted budget is 403 with `x-ratelimit-remaining: 0`. Strong
 * ETags; a 304 is not charged to the budget, as GitHub documents.
 */
import type { IncomingMessage } from 'node:http';
import { githubDeployKeys } from './deploy-key-endpoints.js';
import { type FixtureRepo, findRepo, fullName, type VcsFixture } from './fixture.js';
import { editHooks } from './hook-edit-endpoints.js';
import { githubCreateHook } from './hook-endpoints.js';
import {
  conditional,
  header,
  intParam,
  pageLinks,
  RateBudget,
  type StandinResponse,
  StandinServer,
  slice,
} from './standin-server.js';

const DOCS = 'https://docs.github.com/rest';

export interface GitHubStandin {
  server: StandinServer;
  budget: RateBudget;
  /** What a profile's baseUrl would be for this "Enterprise Server". */
  baseUrl: string;
}

export async function startGitHubStandin(fixture: VcsFixture): Promise<GitHubStandin> {
  const budget = new RateBudget();
  const server = await StandinServer.start((request, url, body) => {
    const created =
      githubCreateHook(fixture, request, url, body) ??
      editHooks('github')(fixture, request, url, body) ??
      githubDeployKeys(fixture, request, url, body);
    if (created) return created;
    const answer = route(fixture, budget, request, url);
    const final = conditional(request, answer, false);
    if (final.status !== 304 && !budget.exhausted && Number.isFinite(budget.remaining)) budget.spend();
    return { ...final, headers: { ...final.headers, ...rateHeaders(budget) } };
  });
  return { server, budget, baseUrl: server.origin };
}

function route(fixture: VcsFixture, budget: RateBudget, request: IncomingMessage, url: URL): StandinResponse {
  if (!url.pathname.startsWith('/api/v3/')) return notFound();
  const path = url.pathname.slice('/api/v3'.length).split('/').filter(Boolean).map(decodeURIComponent);
  const auth = /^(?:Bearer|token) (.+)$/i.exec(header(request, 'authorization') ?? '');
  if (auth && auth[1] !== fixture.token)
    return { status: 401, body: { message: 'Bad credentials', documentation_url: DOCS, status: '401' } };
  if (budget.exhausted) {
    return {
      status: 403,
      body: {
        message:
          'API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, please include the request ID.',
        documentation_url: `${DOCS}/overview/rate-limits-for-the-rest-api`,
        status: '403',
      },
    };
  }
  const signedIn = auth !== null;

  if (path[0] === 'user' && path.length <= 2) {
    if (!signedIn) return { status: 401, body: { message: 'Requires authentication', documentation_url: DOCS, status: '401' } };
    if (path.length === 1) return { status: 200, body: { login: fixture.login, id: 1, type: 'User', site_admin: false } };
    if (path[1] !== 'repos') return notFound();
    const perPage = intParam(url, 'per_page', 30, 100);
    const page = intParam(url, 'page', 1);
    const sorted = [...fixture.repos].sort((a, b) => fullName(a).localeCompare(fullName(b)));
    const { items, last } = slice(sorted, page, perPage);
    const link = pageLinks(url, page, last);
    return { status: 200, headers: link ? { link } : {}, body: items.map((repo) => repository(url, repo)) };
  }

  if (path[0] === 'repos' && (path.length === 3 || (path.length === 4 && path[3] === 'branches'))) {
    const repo = findRepo(fixture, path.slice(1, 3));
    if (!repo || (repo.private && !signedIn)) return notFound();
    if (path.length === 3) return { status: 200, body: repository(url, repo) };
    const perPage = intParam(url, 'per_page', 30, 100);
    const page = intParam(url, 'page', 1);
    const { items, last } = slice(repo.branches, page, perPage);
    const link = pageLinks(url, page, last);
    const body = items.map((b) => ({
      name: b.name,
      commit: { sha: b.sha, url: `${url.origin}/api/v3/repos/${fullName(repo)}/commits/${b.sha}` },
      protected: false,
    }));
    return { status: 200, headers: link ? { link } : {}, body };
  }
  return notFound();
}

function repository(url: URL, repo: FixtureRepo) {
  const name = fullName(repo);
  return {
    id: repo.branches.length * 1000 + name.length,
    name: repo.path[1],
    full_name: name,
    owner: { login: repo.path[0], type: 'Organization' },
    private: repo.private,
    visibility: repo.private ? 'private' : 'public',
    html_url: `${url.origin}/${name}`,
    ssh_url: `git@${url.hostname}:${name}.git`,
    default_branch: repo.defaultBranch,
  };
}

function notFound(): StandinResponse {
  return { status: 404, body: { message: 'Not Found', documentation_url: DOCS, status: '404' } };
}

function rateHeaders(budget: RateBudget): Record<string, string> {
  const remaining = Number.isFinite(budget.remaining) ? Math.max(0, budget.remaining) : 4999;
  const reset = budget.resetAtEpochSeconds || Math.ceil(Date.now() / 1000) + 3600;
  return {
    'x-ratelimit-limit': '5000',
    'x-ratelimit-remaining': String(remaining),
    'x-ratelimit-reset': String(reset),
    'x-ratelimit-resource': 'core',
  };
}
