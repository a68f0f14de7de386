/**
 * GitLab's REST API v4 (docs.gitlab.com/api): `GET /user`, `GET /projects?membership=true`,
 * `GET /projects/:id` and `GET /projects/:id/repository/branches`, where `:id` is a numeric id or
 * the URL-encoded full path (`acme%2Fplatform%2Fmonorepo`). Token in `PRIVATE-TOKEN` (or OAuth
 * Bearer); a bad one is 401 `{"message":"401 Unauthorized"}`. Offset paging: per_page default 20,
 * max 100, `x-page`/`x-next-page`/`x-total-pages` headers and a `Link` header. Weak ETags, as
 * Rails' Rack::ETag gives them. Over the limit: 429 "Retry later" with `Retry-After` and
 * `RateLimit-*` headers.
 */
import type { IncomingMessage } from 'node:http';
import { gitlabDeployKeys } from './deploy-key-endpoints.js';
import { type FixtureRepo, fullName, type VcsFixture } from './fixture.js';
import { editHooks } from './hook-edit-endpoints.js';
import { gitlabCreateHook } from './hook-endpoints.js';
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

export interface GitLabStandin {
  server: StandinServer;
  budget: RateBudget;
  baseUrl: string;
}

/** `omitLinkHeader` behaves like a proxy that drops `Link`, leaving only the `x-*` paging headers. */
export async function startGitLabStandin(
  fixture: VcsFixture,
  options: { omitLinkHeader?: boolean } = {},
): Promise<GitLabStandin> {
  const budget = new RateBudget();
  const server = await StandinServer.start((request, url, body) => {
    const created =
      gitlabCreateHook(fixture, request, url, body) ??
      editHooks('gitlab')(fixture, request, url, body) ??
      gitlabDeployKeys(fixture, request, url, body);
    if (created) return created;
    const answer = conditional(request, route(fixture, budget, request, url), true);
    if (answer.status < 400 && Number.isFinite(budget.remaining)) budget.spend();
    if (options.omitLinkHeader && answer.headers?.link) delete answer.headers.link;
    return answer;
  });
  return { server, budget, baseUrl: server.origin };
}

function route(fixture: VcsFixture, budget: RateBudget, request: IncomingMessage, url: URL): StandinResponse {
  if (!url.pathname.startsWith('/api/v4/')) return { status: 404, body: { error: '404 Not Found' } };
  const token = header(request, 'private-token') ?? /^Bearer (.+)$/i.exec(header(request, 'authorization') ?? '')?.[1] ?? null;
  if (token !== null && token !== fixture.token) return { status: 401, body: { message: '401 Unauthorized' } };
  const signedIn = token !== null;
  if (budget.exhausted) {
    const reset = budget.resetAtEpochSeconds;
    return {
      status: 429,
      headers: {
        'retry-after': String(budget.secondsToReset),
        'ratelimit-limit': '2000',
        'ratelimit-observed': '2001',
        'ratelimit-remaining': '0',
        'ratelimit-reset': String(reset),
        'ratelimit-resettime': new Date(reset * 1000).toUTCString(),
      },
      body: 'Retry later\n',
    };
  }
  // Split on the raw path so an encoded project path stays one segment.
  const path = url.pathname.slice('/api/v4/'.length).split('/').map(decodeURIComponent);
  const projects = fixture.repos.map((repo, index) => ({ id: index + 1, repo }));

  if (path.length === 1 && path[0] === 'user') {
    if (!signedIn) return { status: 401, body: { message: '401 Unauthorized' } };
    return { status: 200, body: { id: 7, username: fixture.login, name: 'SP Tester', state: 'active' } };
  }
  if (path.length === 1 && path[0] === 'projects') {
    // Anonymous callers see public projects only; `membership` narrows nothing for them.
    const listed = signedIn ? projects : projects.filter((p) => !p.repo.private);
    return paged(url, listed, (p) => project(url, p.id, p.repo));
  }
  if (path[0] !== 'projects' || path.length < 2) return { status: 404, body: { error: '404 Not Found' } };
  const key = path[1] ?? '';
  const found = projects.find((p) => String(p.id) === key || fullName(p.repo).toLowerCase() === key.toLowerCase());
  if (!found || (found.repo.private && !signedIn)) return { status: 404, body: { message: '404 Project Not Found' } };
  if (path.length === 2) return { status: 200, body: project(url, found.id, found.repo) };
  if (path.length === 4 && path[2] === 'repository' && path[3] === 'branches') {
    return paged(url, found.repo.branches, (b) => ({
      name: b.name,
      commit: { id: b.sha, short_id: b.sha.slice(0, 8), title: `tip of ${b.name}` },
      merged: false,
      protected: b.name === found.repo.defaultBranch,
      default: b.name === found.repo.defaultBranch,
      web_url: `${url.origin}/${fullName(found.repo)}/-/tree/${b.name}`,
    }));
  }
  return { status: 404, body: { error: '404 Not Found' } };
}

function paged<T>(url: URL, all: readonly T[], render: (item: T) => unknown): StandinResponse {
  const perPage = intParam(url, 'per_page', 20, 100);
  const page = intParam(url, 'page', 1);
  const { items, last } = slice(all, page, perPage);
  const headers: Record<string, string> = {
    'x-page': String(page),
    'x-per-page': String(perPage),
    'x-next-page': page < last ? String(page + 1) : '',
    'x-prev-page': page > 1 ? String(page - 1) : '',
    'x-total': String(all.length),
    'x-total-pages': String(last),
  };
  const link = pageLinks(url, page, last);
  if (link) headers.link = link;
  return { status: 200, headers, body: items.map(render) };
}

function project(url: URL, id: number, repo: FixtureRepo) {
  const path = fullName(repo);
  return {
    id,
    name: repo.path[repo.path.length - 1],
    path: repo.path[repo.path.length - 1],
    path_with_namespace: path,
    namespace: { full_path: repo.path.slice(0, -1).join('/') },
    default_branch: repo.defaultBranch,
    visibility: repo.private ? 'private' : 'public',
    web_url: `${url.origin}/${path}`,
    ssh_url_to_repo: `git@${url.hostname}:${path}.git`,
  };
}
