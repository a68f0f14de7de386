/**
 * Creating a repository webhook, as each provider's REST API documents it; the stand-ins answer
 * these POSTs before their read-only routes. Hooks created are kept in `fixture.hooks`.
 *
 * - GitHub `POST /repos/{owner}/{repo}/hooks` {name: "web", active, events, config {url,
 *   content_type, secret, insecure_ssl}} → 201 {id, type: "Repository", name, active, events,
 *   config without the secret}; 422 "Validation Failed" without config.url or for a second hook
 *   with the same URL ("Hook already exists on this repository").
 * - GitLab `POST /projects/:id/hooks` {url, token, push_events, enable_ssl_verification} → 201
 *   {id, url, project_id, push_events, enable_ssl_verification, created_at}; 400 without url.
 * - Bitbucket Cloud `POST /repositories/{workspace}/{repo_slug}/hooks` {description, url, active,
 *   secret, events} → 201 {uuid: "{…}", url, description, subject_type: "repository", active,
 *   events, secret_set}; 400 without url or events.
 * - Gitea/Forgejo `POST /repos/{owner}/{repo}/hooks` {type, config {url, content_type, secret},
 *   events, active} → 201 {id, type, config {url, content_type}, events, active}; 422 without
 *   type or config.url / content_type.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type FixtureRepo, findRepo, fullName, type VcsFixture } from './fixture.js';
import { header, type StandinResponse } from './standin-server.js';

export interface CreatedHook {
  provider: 'github' | 'gitlab' | 'bitbucket' | 'gitea';
  repository: string;
  id: string;
  url: string;
  secret: string | null;
  events: string[];
  /** The request body as sent. */
  sent: Record<string, unknown>;
}

/** `hooksCreated` counts every hook ever created, so ids stay unique once some are deleted. */
export type HookFixture = VcsFixture & { hooks?: CreatedHook[]; hooksCreated?: number };

type Json = Record<string, unknown>;

function parse(body: string): Json | null {
  try {
    const value = JSON.parse(body) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

function keep(fixture: HookFixture, hook: CreatedHook): void {
  fixture.hooks ??= [];
  fixture.hooks.push(hook);
  fixture.hooksCreated = (fixture.hooksCreated ?? 0) + 1;
}

const bearerOrToken = (request: IncomingMessage) =>
  /^(?:Bearer|token) (.+)$/i.exec(header(request, 'authorization') ?? '')?.[1] ?? null;

export function githubCreateHook(fixture: HookFixture, request: IncomingMessage, url: URL, body: string): StandinResponse | null {
  const m = /^\/api\/v3\/repos\/([^/]+)\/([^/]+)\/hooks$/.exec(url.pathname);
  if (request.method !== 'POST' || !m) return null;
  if (bearerOrToken(request) !== fixture.token) return { status: 401, body: { message: 'Bad credentials', status: '401' } };
  const repo = findRepo(fixture, [decodeURIComponent(m[1] ?? ''), decodeURIComponent(m[2] ?? '')]);
  if (!repo) return { status: 404, body: { message: 'Not Found', status: '404' } };
  const sent = parse(body);
  const config = (sent?.config ?? null) as Json | null;
  if (!sent || !config || typeof config.url !== 'string')
    return {
      status: 422,
      body: { message: 'Validation Failed', errors: [{ resource: 'Hook', code: 'custom', message: 'Config must contain url' }] },
    };
  const name = fullName(repo);
  if (fixture.hooks?.some((h) => h.provider === 'github' && h.repository === name && h.url === config.url))
    return {
      status: 422,
      body: {
        message: 'Validation Failed',
        errors: [{ resource: 'Hook', code: 'custom', message: 'Hook already exists on this repository' }],
      },
    };
  const id = String(100_000 + (fixture.hooksCreated ?? 0));
  const events = Array.isArray(sent.events) ? (sent.events as string[]) : ['push'];
  keep(fixture, {
    provider: 'github',
    repository: name,
    id,
    url: config.url,
    secret: (config.secret as string) ?? null,
    events,
    sent,
  });
  const { secret: _secret, ...shown } = config;
  return {
    status: 201,
    body: {
      type: 'Repository',
      id: Number(id),
      name: sent.name ?? 'web',
      active: sent.active ?? true,
      events,
      config: shown,
      created_at: new Date().toISOString(),
    },
  };
}

export function gitlabCreateHook(fixture: HookFixture, request: IncomingMessage, url: URL, body: string): StandinResponse | null {
  const m = /^\/api\/v4\/projects\/([^/]+)\/hooks$/.exec(url.pathname);
  if (request.method !== 'POST' || !m) return null;
  const token = header(request, 'private-token') ?? bearerOrToken(request);
  if (token !== fixture.token) return { status: 401, body: { message: '401 Unauthorized' } };
  const key = decodeURIComponent(m[1] ?? '');
  const index = fixture.repos.findIndex((r, i) => String(i + 1) === key || fullName(r).toLowerCase() === key.toLowerCase());
  const repo = fixture.repos[index];
  if (!repo) return { status: 404, body: { message: '404 Project Not Found' } };
  const sent = parse(body);
  if (!sent || typeof sent.url !== 'string') return { status: 400, body: { error: 'url is missing' } };
  const id = String(200 + (fixture.hooksCreated ?? 0));
  keep(fixture, {
    provider: 'gitlab',
    repository: fullName(repo),
    id,
    url: sent.url,
    secret: typeof sent.token === 'string' ? sent.token : null,
    events: sent.push_events === false ? [] : ['push'],
    sent,
  });
  return {
    status: 201,
    body: {
      id: Number(id),
      url: sent.url,
      project_id: index + 1,
      push_events: sent.push_events ?? true,
      tag_push_events: false,
      enable_ssl_verification: sent.enable_ssl_verification ?? true,
      created_at: new Date().toISOString(),
    },
  };
}

export function bitbucketCreateHook(
  fixture: HookFixture,
  request: IncomingMessage,
  url: URL,
  body: string,
): StandinResponse | null {
  const m = /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/hooks$/.exec(url.pathname);
  if (request.method !== 'POST' || !m) return null;
  const value = header(request, 'authorization') ?? '';
  const bearer = /^Bearer (.+)$/i.exec(value)?.[1];
  const basic = /^Basic (.+)$/i.exec(value)?.[1];
  const ok =
    bearer === fixture.token ||
    (basic !== undefined && Buffer.from(basic, 'base64').toString('utf8') === `${fixture.login}:${fixture.token}`);
  if (!ok)
    return {
      status: 401,
      body: { type: 'error', error: { message: 'Token is invalid, expired, or not supported for this endpoint.' } },
    };
  const repo: FixtureRepo | undefined = findRepo(fixture, [decodeURIComponent(m[1] ?? ''), decodeURIComponent(m[2] ?? '')]);
  if (!repo) return { status: 404, body: { type: 'error', error: { message: 'Repository not found' } } };
  const sent = parse(body);
  if (!sent || typeof sent.url !== 'string' || !Array.isArray(sent.events) || sent.events.length === 0)
    return {
      status: 400,
      body: { type: 'error', error: { message: 'Bad request', fields: { url: ['This field is required.'] } } },
    };
  const uuid = `{${randomUUID()}}`;
  keep(fixture, {
    provider: 'bitbucket',
    repository: fullName(repo),
    id: uuid,
    url: sent.url,
    secret: typeof sent.secret === 'string' ? sent.secret : null,
    events: sent.events as string[],
    sent,
  });
  return {
    status: 201,
    body: {
      type: 'webhook_subscription',
      uuid,
      url: sent.url,
      description: sent.description ?? '',
      subject_type: 'repository',
      active: sent.active ?? true,
      events: sent.events,
      secret_set: typeof sent.secret === 'string',
      created_at: new Date().toISOString(),
    },
  };
}

export function giteaCreateHook(fixture: HookFixture, request: IncomingMessage, url: URL, body: string): StandinResponse | null {
  const m = /^\/api\/v1\/repos\/([^/]+)\/([^/]+)\/hooks$/.exec(url.pathname);
  if (request.method !== 'POST' || !m) return null;
  if (bearerOrToken(request) !== fixture.token) return { status: 401, body: { message: 'token is required' } };
  const repo = findRepo(fixture, [decodeURIComponent(m[1] ?? ''), decodeURIComponent(m[2] ?? '')]);
  if (!repo) return { status: 404, body: { errors: null, message: "The target couldn't be found." } };
  const sent = parse(body);
  const config = (sent?.config ?? null) as Json | null;
  if (
    !sent ||
    typeof sent.type !== 'string' ||
    !config ||
    typeof config.url !== 'string' ||
    typeof config.content_type !== 'string'
  )
    return { status: 422, body: { message: '[Type]: Required; [Config]: url and content_type are required' } };
  const id = String(300 + (fixture.hooksCreated ?? 0));
  const events = Array.isArray(sent.events) ? (sent.events as string[]) : ['push'];
  keep(fixture, {
    provider: 'gitea',
    repository: fullName(repo),
    id,
    url: config.url,
    secret: (config.secret as string) ?? null,
    events,
    sent,
  });
  return {
    status: 201,
    body: {
      id: Number(id),
      type: sent.type,
      config: { url: config.url, content_type: config.content_type },
      events,
      active: sent.active ?? false,
      created_at: new Date().toISOString(),
    },
  };
}
