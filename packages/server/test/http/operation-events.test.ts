// Issue 12 item 3: GET /api/v1/operations/<uuid>/events streams an operation's steps, log lines and
// status as server-sent events while it runs; Last-Event-ID resumes without gaps or repeats.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeRecipes, seedServer, startTestService, TEST_DB, type TestService, waitForStatus } from '../support/test-service.js';

interface SseEvent {
  id: string | null;
  event: string;
  data: unknown;
}

/** Reads a text/event-stream until it ends (or `until` says so), parsing each event. */
async function readEvents(
  url: string,
  headers: Record<string, string>,
  until: (events: SseEvent[]) => boolean = () => false,
): Promise<{ status: number; contentType: string | null; events: SseEvent[]; body: string }> {
  const controller = new AbortController();
  const res = await fetch(url, { headers, signal: controller.signal });
  const events: SseEvent[] = [];
  if (!res.ok || !res.body)
    return { status: res.status, contentType: res.headers.get('content-type'), events, body: await res.text() };
  const decoder = new TextDecoder();
  let buffer = '';
  const reader = res.body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields = new Map<string, string>();
        for (const line of block.split('\n')) {
          if (line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
        }
        if (!fields.has('event')) continue;
        events.push({
          id: fields.get('id') ?? null,
          event: fields.get('event') ?? '',
          data: JSON.parse(fields.get('data') ?? 'null'),
        });
        if (until(events)) {
          controller.abort();
          return { status: res.status, contentType: res.headers.get('content-type'), events, body: '' };
        }
      }
    }
  } catch (error) {
    if (!controller.signal.aborted) throw error;
  }
  return { status: res.status, contentType: res.headers.get('content-type'), events, body: '' };
}

describe(`GET /api/v1/operations/<uuid>/events (${TEST_DB}; issue 12 item 3)`, () => {
  let s: TestService;
  let base: string;
  let ids: { server: string; serverUser: string };
  let release: () => void = () => undefined;
  const auth = (token = s.token) => ({ authorization: `Bearer ${token}` });

  beforeAll(async () => {
    // `ensure nginx vhost` waits for the gate: the stream is opened while the operation runs.
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    s = await startTestService({ recipes: fakeRecipes({ gate }) });
    base = await s.app.listen({ host: '127.0.0.1', port: 0 });
    ids = await seedServer(s);
  });
  afterAll(async () => s?.stop());

  it('streams steps and lines as they happen, ends with the outcome; resuming after a line sends only the lines after it', async () => {
    const created = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: auth(),
      payload: { ...ids, type: 'static-html', domain: 'live.example.com', ssl: false, options: {} },
    });
    expect(created.statusCode, created.body).toBe(202);
    const { uuid: site, operation } = created.json() as { uuid: string; operation: { uuid: string } };
    const url = `${base}/api/v1/operations/${operation.uuid}/events`;

    // While the operation waits at its second step, the stream already shows the first one done.
    const early = await readEvents(url, auth(s.readToken), (events) =>
      events.some((e) => e.event === 'step' && (e.data as { name: string }).name === 'ensure nginx vhost'),
    );
    expect(early.status).toBe(200);
    expect(early.contentType).toMatch(/^text\/event-stream/);
    expect(early.events.find((e) => e.event === 'step')?.data).toMatchObject({ index: 0, name: 'ensure site directory' });
    expect(early.events.some((e) => e.event === 'end')).toBe(false);

    const whole = readEvents(url, auth());
    release();
    const { events } = await whole;
    await waitForStatus(s, site, ['installed']);
    const end = events.at(-1);
    expect(end).toMatchObject({ event: 'end', data: { status: 'succeeded' } });
    const stored = (
      await s.app.inject({ method: 'GET', url: `/api/v1/operations/${operation.uuid}?limit=1000`, headers: auth() })
    ).json() as { logs: { seq: number; line: string }[]; steps: { name: string; status: string }[] };
    const logs = events.filter((e) => e.event === 'log').map((e) => e.data as { seq: number; line: string });
    // Every stored line once, in order, each event's id the line's seq.
    expect(logs).toEqual(stored.logs.map((l) => expect.objectContaining({ seq: l.seq, line: l.line })));
    expect(events.filter((e) => e.event === 'log').map((e) => Number(e.id))).toEqual(stored.logs.map((l) => l.seq));
    // The ids never go back, so any of them is a safe place to resume.
    const eventIds = events.map((e) => Number(e.id));
    expect(eventIds).toEqual([...eventIds].sort((a, b) => a - b));
    // The last state sent for each step is the stored one.
    const lastState = new Map<string, string>();
    for (const e of events.filter((e) => e.event === 'step')) {
      const step = e.data as { name: string; status: string };
      lastState.set(step.name, step.status);
    }
    expect(Object.fromEntries(lastState)).toEqual(Object.fromEntries(stored.steps.map((st) => [st.name, st.status])));
    expect(events.filter((e) => e.event === 'status').at(-1)?.data).toMatchObject({ status: 'succeeded' });

    // Resume after the first line: exactly the lines after it, then the end.
    expect(stored.logs.length).toBeGreaterThanOrEqual(2);
    const cut = stored.logs[0]?.seq ?? 0;
    const resumed = await readEvents(url, { ...auth(), 'last-event-id': String(cut) });
    expect(resumed.events.filter((e) => e.event === 'log').map((e) => (e.data as { seq: number }).seq)).toEqual(
      stored.logs.filter((l) => l.seq > cut).map((l) => l.seq),
    );
    expect(resumed.events.at(-1)).toMatchObject({ event: 'end', data: { status: 'succeeded' } });
    // ?after= does the same for clients that cannot set the header.
    const viaQuery = await readEvents(`${url}?after=${cut}`, auth());
    expect(viaQuery.events.filter((e) => e.event === 'log').length).toBe(stored.logs.length - 1);

    // A step that ends in the millisecond of its last line (a failure's message and the failed
    // step are often written within one): the line first, then the end, so a client that shows a
    // failed step's lines when it ends (the CLI) has them all.
    const db = s.storage.db;
    const lastStep = await db
      .selectFrom('operation_steps')
      .selectAll()
      .where('operation_uuid', '=', operation.uuid)
      .orderBy('idx', 'desc')
      .executeTakeFirstOrThrow();
    const lastLine = stored.logs.at(-1)!;
    await db
      .updateTable('operation_logs')
      .set({ at: lastStep.finished_at! })
      .where('operation_uuid', '=', operation.uuid)
      .where('seq', '=', lastLine.seq)
      .execute();
    const tied = (await readEvents(url, auth())).events;
    const lineAt = tied.findIndex((e) => e.event === 'log' && (e.data as { seq: number }).seq === lastLine.seq);
    const endAt = tied.findIndex((e) => e.event === 'step' && (e.data as { index: number }).index === lastStep.idx);
    expect(lineAt).toBeGreaterThanOrEqual(0);
    expect(lineAt).toBeLessThan(endAt);
  });

  it('answers 404 for another tenant, 401 without a token and 400 for a bad Last-Event-ID, as problem+json', async () => {
    const created = await s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: auth(),
      payload: { ...ids, type: 'static-html', domain: 'mine.example.com', ssl: false, options: {} },
    });
    const { operation } = created.json() as { operation: { uuid: string } };
    const url = `${base}/api/v1/operations/${operation.uuid}/events`;
    const other = await readEvents(url, auth(s.otherTenantToken));
    expect(other.status).toBe(404);
    expect(other.contentType).toMatch(/problem\+json/);
    expect((await readEvents(url, {})).status).toBe(401);
    const bad = await readEvents(url, { ...auth(), 'last-event-id': 'yesterday' });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toMatchObject({ errors: [{ field: 'Last-Event-ID', code: 'out_of_range' }] });
    expect((await readEvents(`${base}/api/v1/operations/00000000-0000-4000-8000-000000000000/events`, auth())).status).toBe(404);
  });
});
