/**
 * The shared HTTP client's rules that the stand-ins do not exercise: where it refuses to send a
 * token, how it reads odd answers, timeouts, and merged requests. A recording fake fetch stands in
 * for the network here.
 */
import { describe, expect, it } from 'vitest';
import { retryAfterSeconds } from '../../src/vcs/http-errors.js';
import { JsonClient } from '../../src/vcs/json-client.js';
import { linkRel } from '../../src/vcs/link-header.js';
import { expectKind } from './contract.js';

const TOKEN = 'glpat-secret-0123456789';

function fakeFetch(answer: (url: string) => Response | Promise<Response>) {
  const calls: { url: string; headers: Record<string, string> }[] = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    calls.push({ url, headers: { ...(init?.headers as Record<string, string>) } });
    return answer(url);
  }) as typeof globalThis.fetch;
  return { fetch, calls };
}

const json = (body: unknown, init: ResponseInit = {}) => new Response(JSON.stringify(body), { status: 200, ...init });
const client = (fetch: typeof globalThis.fetch, timeoutMs?: number) =>
  new JsonClient({
    provider: 'GitLab',
    baseUrl: 'https://git.example/api/v4',
    headers: { 'PRIVATE-TOKEN': TOKEN },
    secrets: [TOKEN],
    fetch,
    timeoutMs,
  });

describe('JsonClient', () => {
  it('refuses a next-page link to another host, which would receive the token', async () => {
    const { fetch, calls } = fakeFetch(() =>
      json([1], { headers: { link: '<https://evil.example/api/v4/projects?page=2>; rel="next"' } }),
    );
    await expectKind(
      client(fetch).getAll(
        'projects',
        (b) => b as unknown[],
        (p) => linkRel(p.headers.link, 'next'),
      ),
      'provider_error',
      [TOKEN],
    );
    expect(calls.map((c) => c.url)).toEqual(['https://git.example/api/v4/projects']);
  });

  it('follows a redirect inside the API root itself, and refuses one leaving it', async () => {
    const { fetch, calls } = fakeFetch((url) => {
      if (url.endsWith('/projects/old'))
        return new Response(null, { status: 301, headers: { location: '/api/v4/projects/new' } });
      if (url.endsWith('/projects/new')) return json({ id: 1 });
      return new Response(null, { status: 302, headers: { location: 'https://elsewhere.example/login' } });
    });
    expect((await client(fetch).get('projects/old')).body).toEqual({ id: 1 });
    expect(calls[1]).toMatchObject({ url: 'https://git.example/api/v4/projects/new', headers: { 'PRIVATE-TOKEN': TOKEN } });
    await expectKind(client(fetch).get('projects/moved-away'), 'provider_error', [TOKEN]);
    expect(calls.some((c) => c.url.startsWith('https://elsewhere.example'))).toBe(false);
  });

  it('treats a 200 that is not JSON as a provider error, not as data', async () => {
    const { fetch } = fakeFetch(() => new Response('<html>maintenance</html>', { status: 200 }));
    await expectKind(client(fetch).get('user'), 'provider_error', [TOKEN]);
  });

  it('keeps a token the provider echoes out of the error message', async () => {
    const { fetch } = fakeFetch(() => json({ message: `token ${TOKEN} is revoked` }, { status: 401 }));
    const error = await expectKind(client(fetch).get('user'), 'auth_failed', [TOKEN]);
    expect(error.message).toContain('token *** is revoked');
  });

  it('gives up after the timeout as unreachable', async () => {
    const { fetch } = fakeFetch(() => new Promise<Response>(() => {}));
    const hanging = (async (input: string | URL | Request, init?: RequestInit) =>
      new Promise<Response>((_, reject) => {
        void fetch(input, init);
        init?.signal?.addEventListener('abort', () => reject(init.signal?.reason));
      })) as typeof globalThis.fetch;
    const error = await expectKind(client(hanging, 50).get('user'), 'unreachable', [TOKEN]);
    expect(error.message).toMatch(/within 50 ms/);
  });

  it('merges identical concurrent requests into one', async () => {
    const { fetch, calls } = fakeFetch(async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return json({ login: 'x' });
    });
    const c = client(fetch);
    const [a, b] = await Promise.all([c.get('user'), c.get('user')]);
    expect(a.body).toEqual(b.body);
    expect(calls).toHaveLength(1);
  });

  it('stops when a provider announces the same page again', async () => {
    const { fetch } = fakeFetch(() => json([1], { headers: { link: '<https://git.example/api/v4/projects>; rel="next"' } }));
    await expectKind(
      client(fetch).getAll(
        'projects',
        (b) => b as unknown[],
        (p) => linkRel(p.headers.link, 'next'),
      ),
      'provider_error',
      [TOKEN],
    );
  });

  it('tells a secondary rate limit (403 with retry-after) from a token without access (plain 403)', async () => {
    const { fetch } = fakeFetch((url) =>
      url.endsWith('limited')
        ? json({ message: 'You have exceeded a secondary rate limit.' }, { status: 403, headers: { 'retry-after': '30' } })
        : json({ message: 'Resource not accessible by personal access token' }, { status: 403 }),
    );
    expect((await expectKind(client(fetch).get('limited'), 'rate_limited', [TOKEN])).retryAfterSeconds).toBe(30);
    await expectKind(client(fetch).get('forbidden'), 'auth_failed', [TOKEN]);
  });
});

describe('retry-after and Link parsing', () => {
  it('reads Retry-After as seconds or an HTTP date, else an epoch reset header', () => {
    const now = Date.parse('2025-01-01T00:00:00Z');
    expect(retryAfterSeconds(new Headers({ 'retry-after': '42' }), now)).toBe(42);
    expect(retryAfterSeconds(new Headers({ 'retry-after': 'Wed, 01 Jan 2025 00:01:30 GMT' }), now)).toBe(90);
    expect(retryAfterSeconds(new Headers({ 'x-ratelimit-reset': String(now / 1000 + 600) }), now)).toBe(600);
    expect(retryAfterSeconds(new Headers({ 'ratelimit-reset': String(now / 1000 + 5) }), now)).toBe(5);
    expect(retryAfterSeconds(new Headers(), now)).toBeUndefined();
  });

  it('finds rel="next" among several links and rel values', () => {
    const header = '<https://a/x?page=1>; rel="prev first", <https://a/x?page=3>; rel=next, <https://a/x?page=9>; rel="last"';
    expect(linkRel(header, 'next')).toBe('https://a/x?page=3');
    expect(linkRel(header, 'first')).toBe('https://a/x?page=1');
    expect(linkRel('<https://a/x?page=9>; rel="last"', 'next')).toBeNull();
    expect(linkRel(null, 'next')).toBeNull();
  });
});
