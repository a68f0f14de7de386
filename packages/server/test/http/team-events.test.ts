// Issue 12 item 3: GET /api/v1/events streams the caller's team's change log (sites, operations,
// deployments, certificates) as server-sent events; Last-Event-ID or ?after= resumes without gaps
// or repeats; ?types= filters; other teams' events never appear. On PostgreSQL a change made by a
// second service process reaches a stream opened on the first (LISTEN/NOTIFY).
import { SiteplaneClient } from '@siteplane/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSse, type SseEvent } from '../support/sse-client.js';
import { seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';

interface EventData {
  seq: number;
  type: string;
  subject: string;
  data: { site?: string; status?: string };
}

const dataOf = (e: SseEvent) => e.data as EventData;
const installedSite = (site: string) => (events: SseEvent[]) =>
  events.some((e) => e.event === 'site.installed' && dataOf(e).subject === site);

describe(`GET /api/v1/events (${TEST_DB}; issue 12 item 3)`, () => {
  let s: TestService;
  let base: string;
  let ids: { server: string; serverUser: string };
  const auth = (token = s.token) => ({ authorization: `Bearer ${token}` });
  const createSite = async (service: TestService, domain: string, token = s.token, at = ids) => {
    const res = await service.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: auth(token),
      payload: { ...at, type: 'static-html', domain, ssl: false, options: {} },
    });
    expect(res.statusCode, res.body).toBe(202);
    return (res.json() as { uuid: string }).uuid;
  };

  beforeAll(async () => {
    // A poll of ten minutes: whatever the stream delivers here, a notification made it read.
    s = await startTestService({ streamPollMs: 600_000 });
    base = await s.app.listen({ host: '127.0.0.1', port: 0 });
    ids = await seedServer(s);
  });
  afterAll(async () => {
    // fetch (undici) keeps an aborted stream's connection, or opens a spare one, until its next
    // request; the server's close would wait for it until its keep-alive timeout.
    s?.app.server.closeAllConnections();
    await s?.stop();
  });

  it("streams the team's changes as they happen, each event's id its seq; resuming sends exactly the later ones", async () => {
    let site = '';
    const stream = readSse(`${base}/api/v1/events`, auth(s.readToken), (events) => installedSite(site)(events));
    // The stream is open (its first read done) before the site is created.
    await new Promise((r) => setTimeout(r, 200));
    site = await createSite(s, 'events-one.example.com');
    const whole = await stream;
    expect(whole.status).toBe(200);
    expect(whole.contentType).toMatch(/^text\/event-stream/);
    const mine = whole.events.filter((e) => dataOf(e).data.site === site);
    expect(mine[0]).toMatchObject({ event: 'site.created', data: { type: 'site.created', subject: site } });
    expect(mine.map((e) => e.event)).toContain('operation.step');
    expect(mine.at(-2)).toMatchObject({ event: 'operation.finished', data: { data: { status: 'succeeded' } } });
    for (const e of whole.events) expect(e.id).toBe(String(dataOf(e).seq));
    expect(new Set(whole.events.map((e) => e.id)).size).toBe(whole.events.length);

    // From the start: the same events; after the third: exactly the ones after it.
    const fromStart = await readSse(`${base}/api/v1/events`, auth(), installedSite(site));
    expect(fromStart.events.map((e) => e.id)).toEqual(whole.events.map((e) => e.id));
    const third = whole.events[2]?.id as string;
    const resumed = await readSse(`${base}/api/v1/events`, { ...auth(), 'last-event-id': third }, installedSite(site));
    expect(resumed.events.map((e) => e.id)).toEqual(whole.events.slice(3).map((e) => e.id));
    const viaQuery = await readSse(`${base}/api/v1/events?after=${third}`, auth(), installedSite(site));
    expect(viaQuery.events.map((e) => e.id)).toEqual(whole.events.slice(3).map((e) => e.id));
  });

  it('?types= keeps only the types asked for; unknown types and resume points are refused', async () => {
    const site = await createSite(s, 'events-two.example.com');
    const only = await readSse(`${base}/api/v1/events?types=site.*,operation.finished`, auth(), installedSite(site));
    expect(new Set(only.events.map((e) => e.event))).toEqual(new Set(['site.created', 'site.installed', 'operation.finished']));
    for (const [query, field] of [
      ['types=site.exploded', 'types'],
      ['after=-1', 'after'],
      ['after=abc', 'after'],
    ]) {
      const res = await fetch(`${base}/api/v1/events?${query}`, { headers: auth() });
      expect(res.status, query).toBe(400);
      const problem = (await res.json()) as { code: string; errors: { field: string }[] };
      expect(problem.code).toBe('invalid_query');
      expect(problem.errors[0]?.field).toBe(field);
    }
    expect((await fetch(`${base}/api/v1/events`)).status).toBe(401);
  });

  it("another team's stream never shows this team's events, nor this one theirs", async () => {
    const theirs = await seedServer(s, {}, s.otherTenantToken);
    const theirSite = await createSite(s, 'events-theirs.example.com', s.otherTenantToken, theirs);
    const mySite = await createSite(s, 'events-mine.example.com');
    await waitForStatus(s, mySite, ['installed']);
    const their = await readSse(`${base}/api/v1/events`, auth(s.otherTenantToken), installedSite(theirSite));
    expect(their.events.length).toBeGreaterThan(0);
    expect(their.events.every((e) => dataOf(e).data.site === theirSite)).toBe(true);
    const mine = await readSse(`${base}/api/v1/events`, auth(), installedSite(mySite));
    expect(mine.events.some((e) => dataOf(e).data.site === theirSite)).toBe(false);
    // Their event ids are no resume point of ours: it resumes after the number, with our events only.
    const theirId = their.events[0]?.id as string;
    const resumed = await readSse(`${base}/api/v1/events`, { ...auth(), 'last-event-id': theirId }, installedSite(mySite));
    expect(resumed.events.some((e) => dataOf(e).data.site === theirSite)).toBe(false);
  });

  it('under concurrent creates a stream sends every event of the team exactly once', async () => {
    const sites: string[] = [];
    const done = (events: SseEvent[]) =>
      sites.length === 12 &&
      sites.every((site) => events.some((e) => e.event === 'site.installed' && dataOf(e).subject === site));
    const stream = readSse(`${base}/api/v1/events`, auth(), done, 30_000);
    await new Promise((r) => setTimeout(r, 200));
    sites.push(...(await Promise.all(Array.from({ length: 12 }, (_, i) => createSite(s, `burst-${i}.example.com`)))));
    const { events } = await stream;
    const ids = events.map((e) => Number(e.id));
    expect(new Set(ids).size).toBe(ids.length);
    // Everything the log holds for the team up to the last event sent, none missing.
    const team = (
      await s.storage.db
        .selectFrom('sites')
        .select('team_uuid')
        .where('uuid', '=', sites[0] as string)
        .executeTakeFirstOrThrow()
    ).team_uuid;
    const stored = await s.storage.db.selectFrom('events').select('seq').where('team_uuid', '=', team).execute();
    const storedIds = stored.map((r) => Number(r.seq)).filter((seq) => seq <= Math.max(...ids));
    expect([...ids].sort((a, b) => a - b)).toEqual(storedIds.sort((a, b) => a - b));
  });

  it('the SDK follows the stream and, when the connection is cut, resumes after the last event it saw', async () => {
    const site = await createSite(s, 'events-sdk.example.com');
    await waitForStatus(s, site, ['installed']);
    let calls = 0;
    // The first connection is cut after its first event; the SDK must connect again from there.
    const cutting: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (++calls > 1 || !res.body) return res;
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      let seen = '';
      const body = new ReadableStream<Uint8Array>({
        async pull(controller) {
          const { value, done } = await reader.read();
          if (done) return controller.close();
          seen += decoder.decode(value, { stream: true });
          const end = seen.indexOf('\n\n', seen.indexOf('event:'));
          if (seen.includes('event:') && end >= 0) {
            controller.enqueue(new TextEncoder().encode(seen.slice(0, end + 2)));
            await reader.cancel();
            return controller.close();
          }
        },
      });
      return new Response(body, { status: res.status, headers: res.headers });
    };
    const client = new SiteplaneClient({ baseUrl: base, token: s.token, fetch: cutting });
    const controller = new AbortController();
    const got: { id: number | null; event: string }[] = [];
    for await (const e of client.teamEvents({ types: ['site.*'], signal: controller.signal, reconnectMs: 10 })) {
      got.push({ id: e.id, event: e.event });
      if (e.event === 'site.installed' && (e.data as { subject: string }).subject === site) break;
    }
    controller.abort();
    expect(calls).toBeGreaterThan(1);
    const direct = await readSse(`${base}/api/v1/events?types=site.*`, auth(), installedSite(site));
    expect(got.map((e) => String(e.id))).toEqual(direct.events.map((e) => e.id));
  });

  it.runIf(TEST_DB === 'postgres')('a change made by a second process reaches a stream on the first', async () => {
    // The second service shares the database; its worker installs what it is asked to create, and
    // this process learns of it only by LISTEN/NOTIFY (its own poll is ten minutes).
    const second = await startTestService({ sameDatabaseAs: s, streamPollMs: 600_000 });
    try {
      let site = '';
      const stream = readSse(`${base}/api/v1/events?types=site.*`, auth(), (events) => installedSite(site)(events));
      await new Promise((r) => setTimeout(r, 300));
      site = await createSite(second, 'events-elsewhere.example.com');
      const { events } = await stream;
      const mine = events.filter((e) => dataOf(e).subject === site).map((e) => e.event);
      expect(mine).toEqual(['site.created', 'site.installed']);
    } finally {
      await second.stop();
    }
  });
});
