// Issue 13 item 5: the cached site list and single site are answered before Fastify (http/cached-reads.ts)
// only when the route's answer is settled in memory: a token resolved moments ago, a current entry
// of one of its teams, within its rate limit. Everything else reaches Fastify untouched. Through
// the whole service, the early answer is the route's own bytes and headers, and a write is seen at once.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Actor } from '../../src/domain/auth/actor.js';
import { cachedReads } from '../../src/http/cached-reads.js';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { SiteListCache, type SiteListStamp, type SiteStamp } from '../../src/use-cases/sites/site-list-cache.js';
import { seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';

const SERVER = '0b7c3a5e-2f1d-4c8e-9a6b-1d2e3f4a5b6c';
const SITE = '7e1d9c2b-3a4f-4e5d-8c6b-0a1b2c3d4e5f';
const LIST = `/api/v1/sites?server=${SERVER}`;
const actor = (token: string, team: string): Actor => ({ tokenUuid: token, accountUuid: 'a', teamUuids: [team], scope: 'read' });

describe('cachedReads: what is answered before Fastify, and what is left to it (spec §4.1 GET list and one site, §5 bearer token, §8 rate limits)', () => {
  let server: Server;
  let base: string;
  let cache: SiteListCache;
  let fellThrough: string[];
  let observed: string[];
  const actors = new Map<string, Actor>([
    ['tok-a', actor('uuid-a', 'team-a')],
    ['tok-b', actor('uuid-b', 'team-b')],
  ]);
  // Two answers a minute per token: the third is the route's to refuse.
  let limiter: RateLimiter;

  beforeEach(async () => {
    cache = new SiteListCache(true);
    // Held in the middle of a minute: the limiter counts calendar minutes.
    limiter = new RateLimiter(2, 0, () => 30_000);
    fellThrough = [];
    observed = [];
    const answer = cachedReads({
      siteLists: cache,
      peekActor: (token) => actors.get(token),
      limiter,
      observe: (method, route, status) => observed.push(`${method} ${route} ${status}`),
    });
    server = createServer((req, res) => {
      if (answer(req, res)) return;
      fellThrough.push(`${req.method} ${req.url}`);
      res.writeHead(418).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    cache.set(
      SERVER,
      '&',
      { team: 'team-a', body: Buffer.from('{"data":["é"]}'), link: null },
      cache.stamp(SERVER) as SiteListStamp,
    );
    cache.setSite(SITE, SERVER, { team: 'team-a', body: Buffer.from('{"uuid":"s"}') }, cache.siteStamp(SITE) as SiteStamp);
  });
  afterEach(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const get = (path: string, token = 'tok-a', method = 'GET') =>
    fetch(base + path, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });

  it('answers the cached list and site with their bytes, JSON headers and the route in the metrics', async () => {
    const list = await get(LIST);
    expect(list.status).toBe(200);
    expect(list.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(list.headers.get('content-length')).toBe(String(Buffer.byteLength('{"data":["é"]}')));
    expect(await list.text()).toBe('{"data":["é"]}');
    // The uuid's case does not matter, as in the route.
    const site = await get(`/api/v1/sites/${SITE.toUpperCase()}`, 'tok-a');
    expect(await site.text()).toBe('{"uuid":"s"}');
    expect(observed).toEqual(['GET /api/v1/sites 200', 'GET /api/v1/sites/:site 200']);
    expect(fellThrough).toEqual([]);
  });

  it("leaves to Fastify: another team's token, a token not resolved lately, none, other methods and URL forms", async () => {
    const paths = [
      [LIST, 'tok-b'],
      [`/api/v1/sites/${SITE}`, 'tok-b'],
      [LIST, 'tok-unknown'],
      [LIST, ''],
      [`${LIST}&limit=5`, 'tok-a'],
      [`${LIST}/`, 'tok-a'],
      [`/api/v1/sites/${SITE}/`, 'tok-a'],
      [`/api/v1/sites?server=${SERVER.replace('0b', '%30b')}`, 'tok-a'],
      [`/api/v1/sites?server=${'x'.repeat(36)}`, 'tok-a'],
    ] as const;
    for (const [path, token] of paths) expect((await get(path, token)).status, path).toBe(418);
    expect((await get(LIST, 'tok-a', 'HEAD')).status).toBe(418);
    expect(fellThrough).toHaveLength(paths.length + 1);
    expect(observed).toEqual([]);
  });

  it('leaves to Fastify a list changed since it was cached, one with a next page, and any read on shared PostgreSQL', async () => {
    cache.invalidate(SERVER);
    expect((await get(LIST)).status).toBe(418);
    expect((await get(`/api/v1/sites/${SITE}`)).status).toBe(418);
    cache.set(SERVER, '&', { team: 'team-a', body: Buffer.from('[]'), link: 'next' }, cache.stamp(SERVER) as SiteListStamp);
    expect((await get(LIST)).status).toBe(418);

    const shared = new SiteListCache(true, async () => '1');
    const answer = cachedReads({ siteLists: shared, peekActor: (t) => actors.get(t), limiter: new RateLimiter(0, 0) });
    shared.set(SERVER, '&', { team: 'team-a', body: Buffer.from('[]'), link: null }, await shared.stamp(SERVER));
    const req = { method: 'GET', url: LIST, headers: { authorization: 'Bearer tok-a' } };
    expect(answer(req as never, {} as never)).toBe(false);
  });

  it("counts only what it answers against the token's limit, and leaves the request over it to the route", async () => {
    await get(LIST, 'tok-b');
    expect((await get(LIST)).status).toBe(200);
    expect((await get(`/api/v1/sites/${SITE}`)).status).toBe(200);
    expect((await get(LIST)).status).toBe(418);
    // tok-b's request fell through: its budget is whole.
    actors.set('tok-b2', actor('uuid-b', 'team-a'));
    expect((await get(LIST, 'tok-b2')).status).toBe(200);
  });
});

describe(`cached reads through the service (${TEST_DB}; spec §4.1 GET list and one site, §5)`, () => {
  let s: TestService;
  let base: string;
  let ids: { server: string; serverUser: string };
  const auth = (token = s.token) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    s = await startTestService();
    base = await s.app.listen({ host: '127.0.0.1', port: 0 });
    ids = await seedServer(s);
  });
  afterAll(async () => {
    s?.app.server.closeAllConnections();
    await s?.stop();
  });

  const wire = async (path: string, token?: string) => {
    const res = await fetch(base + path, { headers: auth(token) });
    const headers = Object.fromEntries([...res.headers].filter(([name]) => name !== 'date'));
    return { status: res.status, headers, body: await res.text() };
  };

  it("answers a cached list and site as the route does, and another tenant's token as the route does", async () => {
    const created = await fetch(`${base}/api/v1/sites`, {
      method: 'POST',
      headers: { ...auth(), 'content-type': 'application/json' },
      body: JSON.stringify({ ...ids, type: 'static-html', domain: 'cached.example.com', ssl: false, options: {} }),
    });
    expect(created.status).toBe(202);
    const site = ((await created.json()) as { uuid: string }).uuid;
    // Its job done: nothing changes the answers between the reads compared.
    await waitForStatus(s, site, ['installed']);
    await vi.waitFor(async () =>
      expect(JSON.parse((await wire(`/api/v1/sites/${site}`)).body).operation.status).toBe('succeeded'),
    );
    for (const path of [`/api/v1/sites?server=${ids.server}`, `/api/v1/sites/${site}`]) {
      // The first read fills the cache through the route; the next ones are answered from it.
      const first = await wire(path);
      const cached = await wire(path);
      const again = await wire(path, s.readToken);
      expect(first.status).toBe(200);
      expect(cached).toEqual(first);
      expect(again).toEqual(first);
      const viaRoute = await s.app.inject({ method: 'GET', url: path, headers: auth() });
      expect(viaRoute.body).toBe(first.body);
      expect(viaRoute.headers['content-type']).toBe(first.headers['content-type']);
      expect(String(viaRoute.headers['content-length'])).toBe(first.headers['content-length']);
      // Another tenant finds nothing, before and after the cache holds the answer.
      const other = await wire(path, s.otherTenantToken);
      expect(other.status).toBe(404);
    }
  });

  it('sees a site created a moment before in the list it had cached', async () => {
    const path = `/api/v1/sites?server=${ids.server}`;
    const before = JSON.parse((await wire(path)).body) as { data: { domain: string }[] };
    await wire(path);
    const created = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: auth(),
      payload: { ...ids, type: 'static-html', domain: 'later.example.com', ssl: false, options: {} },
    });
    expect(created.statusCode).toBe(202);
    const after = JSON.parse((await wire(path)).body) as { data: { domain: string }[] };
    expect(after.data.map((d) => d.domain)).toEqual([...before.data.map((d) => d.domain), 'later.example.com']);
  });
});
