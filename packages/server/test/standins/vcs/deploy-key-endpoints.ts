/**
 * Adding and removing a repository's deploy key, as each provider's REST API documents it; the
 * stand-ins answer these before their read-only routes. Keys added are kept in `fixture.deployKeys`.
 * `fixture.keyAdmin = false` is a token that reads the repository but may not manage its keys (the
 * admin right is missing), answered as each provider answers it.
 *
 * - GitHub `POST /repos/{owner}/{repo}/keys` {title, key, read_only} → 201 {id, key, url, title,
 *   verified, created_at, read_only, added_by, last_used, enabled}; 422 "Validation Failed" without
 *   a key or for a key already in use; without admin 403 "Resource not accessible by personal access
 *   token". `DELETE /repos/{owner}/{repo}/keys/{key_id}` → 204, 404 for an unknown id.
 * - GitLab `POST /projects/:id/deploy_keys` {title, key, can_push} → 201 {id, title, key, created_at,
 *   expires_at, can_push}; 400 `{"error":"key is missing"}`; 400 "has already been taken" for the same
 *   key twice in a project; below Maintainer 403 `{"message":"403 Forbidden"}`.
 *   `DELETE /projects/:id/deploy_keys/:key_id` → 204, 404 "404 Deploy Key Not Found".
 * - Bitbucket Cloud `POST /repositories/{workspace}/{repo_slug}/deploy-keys` {key, label} → 200
 *   {id, key, label, type: "deploy_key", created_on, repository, links, last_used, comment}; 400
 *   without a key; without `repository:admin` 403 "Your credentials lack one or more required
 *   privilege scopes.". `DELETE …/deploy-keys/{key_id}` → 204, 404 for an unknown id.
 * - Gitea/Forgejo `POST /repos/{owner}/{repo}/keys` {title, key, read_only} → 201 {id, key_id, key,
 *   url, title, fingerprint, created_at, read_only}; 422 without title or key; without repository
 *   admin 403. `DELETE /repos/{owner}/{repo}/keys/{id}` → 204, 404 for an unknown id.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type FixtureRepo, findRepo, fullName, type VcsFixture } from './fixture.js';
import { header, type StandinResponse } from './standin-server.js';

export interface AddedDeployKey {
  provider: 'github' | 'gitlab' | 'bitbucket' | 'gitea';
  repository: string;
  id: string;
  title: string;
  key: string;
  readOnly: boolean;
  /** The request body as sent. */
  sent: Record<string, unknown>;
}

/**
 * `keyAdmin: 'hidden'`: the repository answered 404 to the token, as GitHub hides what it may not
 * manage. `keyEndpointsDown`: the provider fails these requests (503 from its front end).
 */
export type DeployKeyFixture = VcsFixture & {
  deployKeys?: AddedDeployKey[];
  keyAdmin?: boolean | 'hidden';
  keyEndpointsDown?: boolean;
};

type Json = Record<string, unknown>;
let nextId = 7000;

function parse(body: string): Json | null {
  try {
    const value = JSON.parse(body) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

const bearerOrToken = (request: IncomingMessage) =>
  /^(?:Bearer|token) (.+)$/i.exec(header(request, 'authorization') ?? '')?.[1] ?? null;

function keysOf(fixture: DeployKeyFixture): AddedDeployKey[] {
  fixture.deployKeys ??= [];
  return fixture.deployKeys;
}

const fingerprint = (key: string) =>
  `SHA256:${createHash('sha256')
    .update(Buffer.from(key.split(' ')[1] ?? '', 'base64'))
    .digest('base64')
    .replace(/=+$/, '')}`;

/** Shared by the four: find the repository, add or remove, with each provider's own answers. */
interface Dialect {
  provider: AddedDeployKey['provider'];
  authorised(request: IncomingMessage): boolean;
  unauthorised: StandinResponse;
  notFound: StandinResponse;
  forbidden: StandinResponse;
  /** Problem with the body, or null. */
  invalid(sent: Json | null, repoKeys: AddedDeployKey[], all: AddedDeployKey[]): StandinResponse | null;
  created(key: AddedDeployKey, url: URL, repo: FixtureRepo): StandinResponse;
  keyNotFound: StandinResponse;
}

function handle(
  fixture: DeployKeyFixture,
  dialect: Dialect,
  request: IncomingMessage,
  url: URL,
  body: string,
  repo: FixtureRepo | undefined,
  keyId: string | null,
): StandinResponse {
  if (fixture.keyEndpointsDown) return { status: 503, body: '<html><body>503 Service Unavailable</body></html>' };
  if (!dialect.authorised(request)) return dialect.unauthorised;
  if (!repo) return dialect.notFound;
  if (fixture.keyAdmin === false) return dialect.forbidden;
  if (fixture.keyAdmin === 'hidden') return dialect.notFound;
  const name = fullName(repo);
  const all = keysOf(fixture);
  if (request.method === 'DELETE') {
    const index = all.findIndex((k) => k.provider === dialect.provider && k.repository === name && k.id === keyId);
    if (index < 0) return dialect.keyNotFound;
    all.splice(index, 1);
    return { status: 204 };
  }
  const sent = parse(body);
  const repoKeys = all.filter((k) => k.provider === dialect.provider && k.repository === name);
  const problem = dialect.invalid(sent, repoKeys, all);
  if (problem || !sent) return problem ?? dialect.notFound;
  const key: AddedDeployKey = {
    provider: dialect.provider,
    repository: name,
    id: String(nextId++),
    title: String(sent.title ?? sent.label ?? ''),
    key: String(sent.key),
    readOnly:
      dialect.provider === 'bitbucket' ? true : dialect.provider === 'gitlab' ? sent.can_push !== true : sent.read_only !== false,
    sent,
  };
  all.push(key);
  return dialect.created(key, url, repo);
}

const GITHUB_DOCS = 'https://docs.github.com/rest/deploy-keys/deploy-keys';

export function githubDeployKeys(
  fixture: DeployKeyFixture,
  request: IncomingMessage,
  url: URL,
  body: string,
): StandinResponse | null {
  const m = /^\/api\/v3\/repos\/([^/]+)\/([^/]+)\/keys(?:\/([^/]+))?$/.exec(url.pathname);
  if (!m || !((request.method === 'POST' && !m[3]) || (request.method === 'DELETE' && m[3]))) return null;
  const repo = findRepo(fixture, [decodeURIComponent(m[1] ?? ''), decodeURIComponent(m[2] ?? '')]);
  const validation = (message: string) => ({
    status: 422,
    body: {
      message: 'Validation Failed',
      errors: [{ resource: 'PublicKey', code: 'custom', field: 'key', message }],
      documentation_url: `${GITHUB_DOCS}#create-a-deploy-key`,
      status: '422',
    },
  });
  return handle(
    fixture,
    {
      provider: 'github',
      authorised: (r) => bearerOrToken(r) === fixture.token,
      unauthorised: { status: 401, body: { message: 'Bad credentials', documentation_url: GITHUB_DOCS, status: '401' } },
      notFound: { status: 404, body: { message: 'Not Found', documentation_url: GITHUB_DOCS, status: '404' } },
      forbidden: {
        status: 403,
        body: { message: 'Resource not accessible by personal access token', documentation_url: GITHUB_DOCS, status: '403' },
      },
      invalid: (sent, _repoKeys, all) => {
        if (!sent || typeof sent.key !== 'string' || !/^ssh-/.test(sent.key))
          return validation('key is invalid. You must supply a key in OpenSSH public key format');
        if (all.some((k) => k.provider === 'github' && k.key === sent.key)) return validation('key is already in use');
        return null;
      },
      created: (key, u, r) => ({
        status: 201,
        headers: { location: `${u.origin}/api/v3/repos/${fullName(r)}/keys/${key.id}` },
        body: {
          id: Number(key.id),
          key: key.key,
          url: `${u.origin}/api/v3/repos/${fullName(r)}/keys/${key.id}`,
          title: key.title,
          verified: true,
          created_at: new Date().toISOString(),
          read_only: key.readOnly,
          added_by: fixture.login,
          last_used: null,
          enabled: true,
        },
      }),
      keyNotFound: { status: 404, body: { message: 'Not Found', documentation_url: GITHUB_DOCS, status: '404' } },
    },
    request,
    url,
    body,
    repo,
    m[3] ? decodeURIComponent(m[3]) : null,
  );
}

export function gitlabDeployKeys(
  fixture: DeployKeyFixture,
  request: IncomingMessage,
  url: URL,
  body: string,
): StandinResponse | null {
  const m = /^\/api\/v4\/projects\/([^/]+)\/deploy_keys(?:\/([^/]+))?$/.exec(url.pathname);
  if (!m || !((request.method === 'POST' && !m[2]) || (request.method === 'DELETE' && m[2]))) return null;
  const key = decodeURIComponent(m[1] ?? '');
  const index = fixture.repos.findIndex((r, i) => String(i + 1) === key || fullName(r).toLowerCase() === key.toLowerCase());
  return handle(
    fixture,
    {
      provider: 'gitlab',
      authorised: (r) => (header(r, 'private-token') ?? bearerOrToken(r)) === fixture.token,
      unauthorised: { status: 401, body: { message: '401 Unauthorized' } },
      notFound: { status: 404, body: { message: '404 Project Not Found' } },
      forbidden: { status: 403, body: { message: '403 Forbidden' } },
      invalid: (sent, repoKeys) => {
        if (!sent || typeof sent.key !== 'string') return { status: 400, body: { error: 'key is missing' } };
        if (typeof sent.title !== 'string') return { status: 400, body: { error: 'title is missing' } };
        if (repoKeys.some((k) => k.key === sent.key))
          return { status: 400, body: { message: { 'deploy_key.fingerprint_sha256': ['has already been taken'] } } };
        return null;
      },
      created: (k) => ({
        status: 201,
        body: {
          id: Number(k.id),
          title: k.title,
          key: k.key,
          fingerprint_sha256: fingerprint(k.key),
          created_at: new Date().toISOString(),
          expires_at: null,
          can_push: !k.readOnly,
        },
      }),
      keyNotFound: { status: 404, body: { message: '404 Deploy Key Not Found' } },
    },
    request,
    url,
    body,
    fixture.repos[index],
    m[2] ? decodeURIComponent(m[2]) : null,
  );
}

export function bitbucketDeployKeys(
  fixture: DeployKeyFixture,
  request: IncomingMessage,
  url: URL,
  body: string,
): StandinResponse | null {
  const m = /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/deploy-keys(?:\/([^/]+))?$/.exec(url.pathname);
  if (!m || !((request.method === 'POST' && !m[3]) || (request.method === 'DELETE' && m[3]))) return null;
  const repo = findRepo(fixture, [decodeURIComponent(m[1] ?? ''), decodeURIComponent(m[2] ?? '')]);
  const error = (status: number, message: string, detail?: unknown) => ({
    status,
    body: { type: 'error', error: detail ? { message, detail } : { message } },
  });
  return handle(
    fixture,
    {
      provider: 'bitbucket',
      authorised: (r) => {
        const value = header(r, 'authorization') ?? '';
        const bearer = /^Bearer (.+)$/i.exec(value)?.[1];
        const basic = /^Basic (.+)$/i.exec(value)?.[1];
        return (
          bearer === fixture.token ||
          (basic !== undefined && Buffer.from(basic, 'base64').toString('utf8') === `${fixture.login}:${fixture.token}`)
        );
      },
      unauthorised: error(401, 'Token is invalid, expired, or not supported for this endpoint.'),
      notFound: error(
        404,
        'You may not have access to this repository or it no longer exists in this workspace. If you think this repository exists and you have access, make sure you are authenticated.',
      ),
      forbidden: error(403, 'Your credentials lack one or more required privilege scopes.', {
        required: ['repository:admin'],
        granted: ['repository', 'account'],
      }),
      invalid: (sent) => (!sent || typeof sent.key !== 'string' ? error(400, 'key: This field is required.') : null),
      created: (k, u, r) => ({
        status: 200,
        body: {
          id: Number(k.id),
          key: k.key.split(' ').slice(0, 2).join(' '),
          label: k.title,
          type: 'deploy_key',
          created_on: new Date().toISOString(),
          repository: { full_name: fullName(r), name: r.path[1], type: 'repository', uuid: `{${fullName(r)}}` },
          links: { self: { href: `${u.origin}/2.0/repositories/${fullName(r)}/deploy-keys/${k.id}` } },
          last_used: null,
          comment: k.key.split(' ').slice(2).join(' '),
        },
      }),
      keyNotFound: error(404, 'Resource not found'),
    },
    request,
    url,
    body,
    repo,
    m[3] ? decodeURIComponent(m[3]) : null,
  );
}

export function giteaDeployKeys(
  fixture: DeployKeyFixture,
  request: IncomingMessage,
  url: URL,
  body: string,
): StandinResponse | null {
  const m = /^\/api\/v1\/repos\/([^/]+)\/([^/]+)\/keys(?:\/([^/]+))?$/.exec(url.pathname);
  if (!m || !((request.method === 'POST' && !m[3]) || (request.method === 'DELETE' && m[3]))) return null;
  const repo = findRepo(fixture, [decodeURIComponent(m[1] ?? ''), decodeURIComponent(m[2] ?? '')]);
  const swagger = `${url.origin}/api/swagger`;
  return handle(
    fixture,
    {
      provider: 'gitea',
      authorised: (r) => bearerOrToken(r) === fixture.token,
      unauthorised: { status: 401, body: { message: 'token is required', url: swagger } },
      notFound: { status: 404, body: { errors: null, message: "The target couldn't be found.", url: swagger } },
      forbidden: { status: 403, body: { message: 'user should have admin permission on the repository', url: swagger } },
      invalid: (sent) =>
        !sent || typeof sent.key !== 'string' || typeof sent.title !== 'string'
          ? { status: 422, body: { message: '[Title]: Required; [Key]: Required', url: swagger } }
          : null,
      created: (k, u, r) => ({
        status: 201,
        body: {
          id: Number(k.id),
          key_id: Number(k.id) + 1,
          key: k.key,
          url: `${u.origin}/api/v1/repos/${fullName(r)}/keys/${k.id}`,
          title: k.title,
          fingerprint: fingerprint(k.key),
          created_at: new Date().toISOString(),
          read_only: k.readOnly,
        },
      }),
      keyNotFound: { status: 404, body: { errors: null, message: "The target couldn't be found.", url: swagger } },
    },
    request,
    url,
    body,
    repo,
    m[3] ? decodeURIComponent(m[3]) : null,
  );
}
