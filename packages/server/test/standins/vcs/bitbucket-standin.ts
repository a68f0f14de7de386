/**
 * Bitbucket Cloud's REST API 2.0 (developer.atlassian.com/cloud/bitbucket/rest): `GET /user`,
 * `GET /user/workspaces`, `GET /repositories/{workspace}`, `GET /repositories/{workspace}/{slug}`
 * and `.../refs/branches`. Lists are `{pagelen, page, size, values, next}` (pagelen default 10,
 * max 100); the last page has no `next`. Auth: Bearer access token, or Basic `username:app
 * password`; a bad one is 401 with `{"type":"error","error":{"message":…}}`. Over the limit: 429
 * "Rate limit for this resource has been exceeded", without a reset header. Strong ETags.
 */
import type { IncomingMessage } from 'node:http';
import { bitbucketDeployKeys } from './deploy-key-endpoints.js';
import { type FixtureRepo, findRepo, fullName, type VcsFixture } from './fixture.js';
import { editHooks } from './hook-edit-endpoints.js';
import { bitbucketCreateHook } from './hook-endpoints.js';
import { conditional, header, intParam, RateBudget, type StandinResponse, StandinServer, slice } from './standin-server.js';

export interface BitbucketStandin {
  server: StandinServer;
  budget: RateBudget;
  baseUrl: string;
}

const NO_ACCESS =
  'You may not have access to this repository or it no longer exists in this workspace. If you think this repository exists and you have access, make sure you are authenticated.';

export async function startBitbucketStandin(fixture: VcsFixture): Promise<BitbucketStandin> {
  const budget = new RateBudget();
  const server = await StandinServer.start((request, url, body) => {
    const created =
      bitbucketCreateHook(fixture, request, url, body) ??
      editHooks('bitbucket')(fixture, request, url, body) ??
      bitbucketDeployKeys(fixture, request, url, body);
    if (created) return created;
    const answer = conditional(request, route(fixture, budget, request, url), false);
    if (answer.status < 400 && Number.isFinite(budget.remaining)) budget.spend();
    return answer;
  });
  return { server, budget, baseUrl: server.origin };
}

function error(status: number, message: string): StandinResponse {
  return { status, body: { type: 'error', error: { message } } };
}

/** True for the fixture's token as Bearer, or as the app password of `login` over Basic. */
function authorised(fixture: VcsFixture, request: IncomingMessage): boolean | null {
  const value = header(request, 'authorization');
  if (value === null) return null;
  const bearer = /^Bearer (.+)$/i.exec(value);
  if (bearer) return bearer[1] === fixture.token;
  const basic = /^Basic (.+)$/i.exec(value);
  return basic ? Buffer.from(basic[1] ?? '', 'base64').toString('utf8') === `${fixture.login}:${fixture.token}` : false;
}

function route(fixture: VcsFixture, budget: RateBudget, request: IncomingMessage, url: URL): StandinResponse {
  if (!url.pathname.startsWith('/2.0/')) return error(404, 'Resource not found');
  const auth = authorised(fixture, request);
  if (auth === false) return error(401, 'Token is invalid, expired, or not supported for this endpoint.');
  if (budget.exhausted) return error(429, 'Rate limit for this resource has been exceeded');
  const path = url.pathname.slice('/2.0/'.length).split('/').filter(Boolean).map(decodeURIComponent);
  const workspaces = [...new Set(fixture.repos.map((repo) => repo.path[0] ?? ''))];

  if (path[0] === 'user' && path.length === 1) {
    if (!auth)
      return error(
        401,
        'This API is only accessible with the following authentication types: session, password, apppassword, api_token, repository_access_token, workspace_access_token, project_access_token',
      );
    return {
      status: 200,
      body: { type: 'user', username: fixture.login, nickname: fixture.login, display_name: 'SP Tester', uuid: '{5f1e}' },
    };
  }
  if (path[0] === 'user' && path[1] === 'workspaces' && path.length === 2) {
    if (!auth) return error(401, 'Authentication required');
    return paged(url, workspaces, (slug) => ({
      type: 'workspace_access',
      administrator: false,
      workspace: { type: 'workspace', slug, name: slug, uuid: `{${slug}}` },
    }));
  }
  if (path[0] !== 'repositories' || path.length < 2) return error(404, 'Resource not found');
  const visible = (repo: FixtureRepo) => auth === true || !repo.private;
  if (path.length === 2) {
    if (!workspaces.includes(path[1] ?? '')) return error(404, `Workspace ${path[1]} not found`);
    return paged(
      url,
      fixture.repos.filter((repo) => repo.path[0] === path[1] && visible(repo)),
      (repo) => repository(url, repo),
    );
  }
  const repo = findRepo(fixture, path.slice(1, 3));
  if (!repo || !visible(repo)) return error(404, NO_ACCESS);
  if (path.length === 3) return { status: 200, body: repository(url, repo) };
  if (path.length === 5 && path[3] === 'refs' && path[4] === 'branches') {
    return paged(url, repo.branches, (b) => ({ type: 'branch', name: b.name, target: { type: 'commit', hash: b.sha } }));
  }
  return error(404, 'Resource not found');
}

function paged<T>(url: URL, all: readonly T[], render: (item: T) => unknown): StandinResponse {
  const pagelen = intParam(url, 'pagelen', 10, 100);
  const page = intParam(url, 'page', 1);
  const { items, last } = slice(all, page, pagelen);
  const body: Record<string, unknown> = { pagelen, page, size: all.length, values: items.map(render) };
  if (page < last) {
    const next = new URL(url.href);
    next.searchParams.set('page', String(page + 1));
    body.next = next.href;
  }
  return { status: 200, body };
}

function repository(url: URL, repo: FixtureRepo) {
  const name = fullName(repo);
  return {
    type: 'repository',
    full_name: name,
    name: repo.path[1],
    slug: repo.path[1],
    is_private: repo.private,
    mainbranch: { type: 'branch', name: repo.defaultBranch },
    workspace: { type: 'workspace', slug: repo.path[0] },
    links: {
      html: { href: `${url.origin}/${name}` },
      clone: [
        { name: 'https', href: `${url.origin}/${name}.git` },
        { name: 'ssh', href: `git@${url.hostname}:${name}.git` },
      ],
    },
  };
}
