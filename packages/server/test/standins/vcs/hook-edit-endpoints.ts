/**
 * Editing and deleting a repository webhook created through hook-endpoints.ts, as each provider's
 * REST API documents it; hooks live in `fixture.hooks`. `fixture.hookAdmin = false` is a token that
 * reads the repository but may not manage its hooks, answered 403 as each provider answers it.
 *
 * - GitHub `PATCH /repos/{owner}/{repo}/hooks/{hook_id}` {config, events, active} → 200 the hook
 *   (config without the secret). A config sent without `secret` removes the secret ("If you
 *   previously had a secret set, you must provide the same secret or set a new secret or the
 *   secret will be removed"). `DELETE …/hooks/{hook_id}` → 204; 404 {message: "Not Found"}.
 * - GitLab `PUT /projects/:id/hooks/:hook_id` {url, token, push_events, …} → 200 the hook (no
 *   token); `DELETE` → 204; 404 {message: "404 Not found"}; below Maintainer 403.
 * - Bitbucket Cloud `PUT /repositories/{workspace}/{repo_slug}/hooks/{uid}` {description, url,
 *   active, events, secret} → 200 the subscription; `secret` left out keeps it, null removes it.
 *   `DELETE` → 204; 404 {type: "error", error: {message}}.
 * - Gitea/Forgejo `PATCH /repos/{owner}/{repo}/hooks/{id}` {config, events, active} → 200 the hook;
 *   `config.secret` replaces the secret when given. `DELETE` → 204; 404 "The target couldn't be found.".
 */
import type { IncomingMessage } from 'node:http';
import { findRepo, fullName } from './fixture.js';
import type { CreatedHook, HookFixture } from './hook-endpoints.js';
import { header, type StandinResponse } from './standin-server.js';

export type EditableHookFixture = HookFixture & {
  /** false: the token may read the repository but not manage its hooks. */
  hookAdmin?: boolean;
  /** Every PATCH/PUT/DELETE of a hook, in order. */
  hookEdits?: { method: string; id: string; body: Record<string, unknown> | null }[];
};

type Provider = CreatedHook['provider'];
type Json = Record<string, unknown>;

const PATHS: Record<Provider, { re: RegExp; edit: 'PATCH' | 'PUT' }> = {
  github: { re: /^\/api\/v3\/repos\/([^/]+)\/([^/]+)\/hooks\/([^/]+)$/, edit: 'PATCH' },
  gitlab: { re: /^\/api\/v4\/projects\/([^/]+)\/hooks\/([^/]+)$/, edit: 'PUT' },
  bitbucket: { re: /^\/2\.0\/repositories\/([^/]+)\/([^/]+)\/hooks\/([^/]+)$/, edit: 'PUT' },
  gitea: { re: /^\/api\/v1\/repos\/([^/]+)\/([^/]+)\/hooks\/([^/]+)$/, edit: 'PATCH' },
};

const ANSWERS: Record<Provider, { unauthorized: Json; forbidden: Json; notFound: Json }> = {
  github: {
    unauthorized: { message: 'Bad credentials' },
    forbidden: { message: 'Resource not accessible by personal access token' },
    notFound: { message: 'Not Found' },
  },
  gitlab: {
    unauthorized: { message: '401 Unauthorized' },
    forbidden: { message: '403 Forbidden' },
    notFound: { message: '404 Not found' },
  },
  bitbucket: {
    unauthorized: { type: 'error', error: { message: 'Token is invalid, expired, or not supported for this endpoint.' } },
    forbidden: { type: 'error', error: { message: 'Your credentials lack one or more required privilege scopes.' } },
    notFound: { type: 'error', error: { message: 'Resource not found' } },
  },
  gitea: {
    unauthorized: { message: 'token is required' },
    forbidden: { message: 'user should be an owner or a collaborator with admin write of a repository' },
    notFound: { errors: null, message: "The target couldn't be found." },
  },
};

function authorized(provider: Provider, fixture: HookFixture, request: IncomingMessage): boolean {
  const value = header(request, 'authorization') ?? '';
  if (provider === 'gitlab') return (header(request, 'private-token') ?? /^Bearer (.+)$/i.exec(value)?.[1]) === fixture.token;
  if (provider === 'bitbucket') {
    const basic = /^Basic (.+)$/i.exec(value)?.[1];
    return (
      /^Bearer (.+)$/i.exec(value)?.[1] === fixture.token ||
      (basic !== undefined && Buffer.from(basic, 'base64').toString('utf8') === `${fixture.login}:${fixture.token}`)
    );
  }
  return /^(?:Bearer|token) (.+)$/i.exec(value)?.[1] === fixture.token;
}

function repoOf(provider: Provider, fixture: HookFixture, m: RegExpExecArray): string | null {
  if (provider === 'gitlab') {
    const key = decodeURIComponent(m[1] ?? '');
    const index = fixture.repos.findIndex((r, i) => String(i + 1) === key || fullName(r).toLowerCase() === key.toLowerCase());
    const repo = fixture.repos[index];
    return repo ? fullName(repo) : null;
  }
  const repo = findRepo(fixture, [decodeURIComponent(m[1] ?? ''), decodeURIComponent(m[2] ?? '')]);
  return repo ? fullName(repo) : null;
}

function parse(body: string): Json | null {
  try {
    const value = JSON.parse(body) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : null;
  } catch {
    return null;
  }
}

/** The PATCH/PUT/DELETE of `provider`'s hooks, or null when the request is not one. */
export function editHooks(provider: Provider) {
  return (fixture: EditableHookFixture, request: IncomingMessage, url: URL, body: string): StandinResponse | null => {
    const { re, edit } = PATHS[provider];
    const m = re.exec(url.pathname);
    if (!m || (request.method !== edit && request.method !== 'DELETE')) return null;
    const answers = ANSWERS[provider];
    if (!authorized(provider, fixture, request)) return { status: 401, body: answers.unauthorized };
    const repository = repoOf(provider, fixture, m);
    if (!repository) return { status: 404, body: answers.notFound };
    if (fixture.hookAdmin === false) return { status: 403, body: answers.forbidden };
    const id = decodeURIComponent(m[provider === 'gitlab' ? 2 : 3] ?? '');
    const sent = request.method === 'DELETE' ? null : parse(body);
    fixture.hookEdits ??= [];
    fixture.hookEdits.push({ method: request.method ?? '', id, body: sent });
    const index = (fixture.hooks ?? []).findIndex((h) => h.provider === provider && h.repository === repository && h.id === id);
    const hook = fixture.hooks?.[index];
    if (!hook) return { status: 404, body: answers.notFound };
    if (request.method === 'DELETE') {
      fixture.hooks?.splice(index, 1);
      return { status: 204 };
    }
    if (!sent) return { status: 400, body: { message: 'Problems parsing JSON' } };
    applyEdit(provider, hook, sent);
    return {
      status: 200,
      body: {
        id: provider === 'bitbucket' ? undefined : Number(id),
        uuid: provider === 'bitbucket' ? id : undefined,
        url: hook.url,
        events: hook.events,
        active: true,
      },
    };
  };
}

function applyEdit(provider: Provider, hook: CreatedHook, sent: Json): void {
  const config = (sent.config ?? null) as Json | null;
  switch (provider) {
    case 'github':
      if (config) {
        if (typeof config.url === 'string') hook.url = config.url;
        // As documented: a config without the secret removes it.
        hook.secret = typeof config.secret === 'string' ? config.secret : null;
      }
      break;
    case 'gitea':
      if (config) {
        if (typeof config.url === 'string') hook.url = config.url;
        if (typeof config.secret === 'string') hook.secret = config.secret;
      }
      break;
    case 'gitlab':
      if (typeof sent.url === 'string') hook.url = sent.url;
      if (typeof sent.token === 'string') hook.secret = sent.token;
      break;
    case 'bitbucket':
      if (typeof sent.url === 'string') hook.url = sent.url;
      if (sent.secret === null) hook.secret = null;
      else if (typeof sent.secret === 'string') hook.secret = sent.secret;
      break;
  }
  if (Array.isArray(sent.events)) hook.events = sent.events as string[];
  hook.sent = sent;
}
