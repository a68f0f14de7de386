/**
 * One POST, PATCH or PUT of a JSON body (or one DELETE) to a hosted provider's API, for the few writes Siteplane
 * makes there (a repository webhook, a deploy key). The same rules as the reading client (json-client.ts): the
 * profile's auth headers, a timeout, the answer read capped, failures mapped to VcsError with the
 * token scrubbed, and no redirect followed (a write is not replayed to another address).
 */
import { readCappedText } from './body-cap.js';
import { errorFromNetwork, errorFromResponse } from './http-errors.js';
import { DEFAULT_TIMEOUT_MS, type FetchLike } from './json-client.js';
import { VcsError } from './provider.js';
import { quote } from './redact.js';

export interface PostTarget {
  provider: string;
  /** API root without trailing slash. */
  baseUrl: string;
  headers: Record<string, string>;
  secrets: string[];
  fetch?: FetchLike;
  now?: () => number;
  timeoutMs?: number;
}

export async function postJson(target: PostTarget, path: string, body: unknown): Promise<unknown> {
  const { response, text } = await send(target, 'POST', path, body);
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new VcsError(
      'provider_error',
      `${target.provider} answered ${response.status} for ${quote(path, target.secrets)} with a body that is not JSON`,
    );
  }
}

/** PATCH or PUT of a JSON body to one resource (an edit); the answer's body is not read further. */
export async function sendJson(target: PostTarget, method: 'PATCH' | 'PUT', path: string, body: unknown): Promise<void> {
  await send(target, method, path, body);
}

/** DELETE of one resource; any 2xx (204 as documented) is done, a 404 a VcsError `not_found`. */
export async function deleteAt(target: PostTarget, path: string): Promise<void> {
  await send(target, 'DELETE', path, undefined);
}

async function send(
  target: PostTarget,
  method: 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  path: string,
  body: unknown,
): Promise<{ response: Response; text: string }> {
  const { provider, secrets } = target;
  const timeoutMs = target.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const url = new URL(path.replace(/^\/+/, ''), `${target.baseUrl.replace(/\/+$/, '')}/`).href;
  let response: Response;
  let text: string;
  try {
    response = await (target.fetch ?? globalThis.fetch)(url, {
      method,
      headers: body === undefined ? target.headers : { ...target.headers, 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(timeoutMs),
      redirect: 'manual',
    });
    text = await readCappedText(response, () => `${provider} (${quote(path, secrets)})`);
  } catch (error) {
    if (error instanceof VcsError) throw error;
    throw errorFromNetwork(provider, path, error, timeoutMs, secrets);
  }
  if (!response.ok) {
    if (response.status >= 300 && response.status < 400)
      throw new VcsError('provider_error', `${provider} redirected ${quote(path, secrets)}; a write is not followed elsewhere`);
    throw errorFromResponse(
      provider,
      path,
      { status: response.status, headers: response.headers, bodyText: text },
      secrets,
      (target.now ?? Date.now)(),
    );
  }
  return { response, text };
}
