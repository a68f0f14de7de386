/**
 * Gitea's (and Forgejo's) API v1 as its swagger describes it: `GET /user`, `GET /user/repos`,
 * `GET /repos/{owner}/{repo}`, `GET /repos/{owner}/{repo}/branches`, with `page` and `limit`
 * (default 30, capped at MAX_RESPONSE_ITEMS = 50), a `Link` header and `X-Total-Count`.
 * `Authorization: token …` (or Bearer); a bad token is 401 "invalid username, password or token".
 * Its JSON API sends no ETag, so neither does this. Over the limit (a rate-limiting proxy in front,
 * as Gitea has none built in): 429 with `Retry-After`.
 */
import type { IncomingMessage } from 'node:http';
import { giteaDeployKeys } from './deploy-key-endpoints.js';
import { type FixtureRepo, findRepo, fullName, type VcsFixture } from './fixture.js';
import { editHooks } from './hook-edit-endpoints.js';
import { giteaCreateHook } from './hook-endpoints.js';
import { header, intParam, pageLinks, RateBudget, type StandinResponse, StandinServer, slice } from './standin-server.js';

export interface GiteaStandin {
  server: StandinServer;
  budget: RateBudget;
  baseUrl: string;
}

export async function startGiteaStandin(fixture: VcsFixture): Promise<GiteaStandin> {
  const budget = new RateBudget();
  const server = await StandinServer.start((request, url, body) => {
    const created =
      giteaCreateHook(fixture, request, url, body) ??
      editHooks('gitea')(fixture, request, url, body) ??
      giteaDeployKeys(fixture, request, url, body);
    if (created) return created;
    const answer = route(fixture, budget, request, url);
    if (answer.status < 400 && Number.isFinite(budget.remaining)) budget.spend();
    return answer;
  });
  return { server, budget, baseUrl: server.origin };
}

function route(fixture: VcsFixture, budget: RateBudget, request: IncomingMessage, url: URL): StandinResponse {
  const swagger = `${url.origin}/api/swagger`;
  if (!url.pathname.startsWith('/api/v1/')) return { status: 404, body: 'Not Found' };
  const token = /^(?:token|Bearer) (.+)$/i.exec(header(request, 'authorization') ?? '')?.[1] ?? null;
  if (token !== null && token !== fixture.token)
    return { status: 401, body: { message: 'invalid username, password or token', url: swagger } };
  if (budget.exhausted)
    return { status: 429, headers: { 'retry-after': String(budget.secondsToReset) }, body: 'Too Many Requests' };
  const signedIn = token !== null;
  const path = url.pathname.slice('/api/v1/'.length).split('/').filter(Boolean).map(decodeURIComponent);
  const notFound: StandinResponse = {
    status: 404,
    body: { errors: null, message: "The target couldn't be found.", url: swagger },
  };

  if (path[0] === 'user' && path.length <= 2) {
    if (!signedIn) return { status: 401, body: { message: 'token is required', url: swagger } };
    if (path.length === 1)
      return { status: 200, body: { id: 3, login: fixture.login, username: fixture.login, full_name: 'SP Tester' } };
    if (path[1] !== 'repos') return notFound;
    return paged(url, fixture.repos, (repo) => repository(url, repo));
  }
  if (path[0] === 'repos' && (path.length === 3 || (path.length === 4 && path[3] === 'branches'))) {
    const repo = findRepo(fixture, path.slice(1, 3));
    if (!repo || (repo.private && !signedIn)) return notFound;
    if (path.length === 3) return { status: 200, body: repository(url, repo) };
    return paged(url, repo.branches, (b) => ({
      name: b.name,
      commit: { id: b.sha, message: `tip of ${b.name}\n` },
      protected: false,
    }));
  }
  return notFound;
}

function paged<T>(url: URL, all: readonly T[], render: (item: T) => unknown): StandinResponse {
  const limit = intParam(url, 'limit', 30, 50);
  const page = intParam(url, 'page', 1);
  const { items, last } = slice(all, page, limit);
  const headers: Record<string, string> = { 'x-total-count': String(all.length) };
  const link = pageLinks(url, page, last);
  if (link) headers.link = link;
  return { status: 200, headers, body: items.map(render) };
}

function repository(url: URL, repo: FixtureRepo) {
  const name = fullName(repo);
  return {
    id: name.length,
    name: repo.path[1],
    full_name: name,
    owner: { login: repo.path[0] },
    private: repo.private,
    default_branch: repo.defaultBranch,
    html_url: `${url.origin}/${name}`,
    ssh_url: `git@${url.hostname}:${name}.git`,
  };
}
