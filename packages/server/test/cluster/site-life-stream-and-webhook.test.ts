import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, dryRunServer, serve, siteplane, stop } from '../support/cli-process.js';
import { readSse, type SseEvent } from '../support/sse-client.js';
import { LOOPBACK_TARGETS, TEST_DB } from '../support/test-service.js';
import { type ReceivedWebhook, startWebhookReceiver, verifyStandardWebhook } from '../support/webhook-receiver.js';

/**
 * Issue 12, "done when": an SSE client and a webhook receiver each see every change of a site's
 * life, across two processes on PostgreSQL. Two full `siteplane serve` processes (API and worker
 * each) on one fresh database: the SSE client reads GET /api/v1/events from process A; the webhook
 * endpoint is registered through process B and verified by a loopback receiver with its own
 * Standard Webhooks check. The site is created, deployed (an uploaded artifact) and given its
 * certificate again through B, and deleted through A; the stream is left mid-way and resumed with
 * Last-Event-ID while the deploy runs. Both must see exactly the team's change log (read from the
 * database afterwards), in its order, without gaps or repeats; another team's site, created and
 * deleted in the same run, reaches neither.
 */
const PG_ADMIN = process.env.SITEPLANE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface EventBody {
  type: string;
  timestamp: string;
  data: { seq: number; subject: string; site?: string };
}
interface StreamData {
  seq: number;
  type: string;
  subject: string;
  data: { site?: string };
}

describe.skipIf(TEST_DB !== 'postgres')(
  'a site’s life seen by an SSE client on one process and a webhook registered through another',
  () => {
    const dbName = `sp_life_${randomBytes(6).toString('hex')}`;
    const databaseUrl = PG_ADMIN.replace(/\/[^/]*$/, `/${dbName}`);
    // One data directory for both: an uploaded artifact is deployed by whichever worker takes the job.
    const dataDir = mkdtempSync(join(tmpdir(), 'siteplane-life-'));
    const secretKey = randomBytes(32).toString('base64');
    const env: Record<string, string> = {
      DATABASE_URL: databaseUrl,
      SITEPLANE_DATA_DIR: dataDir,
      SITEPLANE_SECRET_KEY: secretKey,
      SITEPLANE_WORKER: 'on',
      SITEPLANE_QUOTA_SITES: '0',
      SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS,
    };
    const children: ChildProcess[] = [];
    let a = '';
    let b = '';
    let token = '';
    let otherToken = '';
    let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

    const newToken = async (args: string[]) => {
      const created = await siteplane(['token', 'create', ...args], env);
      if (created.code !== 0) throw new Error(created.stderr);
      return created.stdout.trim().split('\n').at(-1)?.trim() ?? '';
    };

    beforeAll(async () => {
      const admin = new pg.Client({ connectionString: PG_ADMIN });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${dbName}`);
      await admin.end();
      const started = await Promise.allSettled([serve(env, 200_000), serve(env, 200_000)]);
      for (const s of started) if (s.status === 'fulfilled') children.push(s.value.child);
      const failed = started.find((s) => s.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      [a, b] = started.map((s) => (s as PromiseFulfilledResult<{ base: string }>).value.base) as [string, string];
      token = await newToken(['--name', 'life']);
      otherToken = await newToken(['--name', 'other', '--account', 'other-tenant']);
      receiver = await startWebhookReceiver();
    }, 300_000);

    afterAll(async () => {
      for (const child of children) await stop(child);
      await receiver?.close();
      rmSync(dataDir, { recursive: true, force: true });
      const admin = new pg.Client({ connectionString: PG_ADMIN });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await admin.end();
    });

    it('sees every change, in order, once each, of its own team only, across a Last-Event-ID reconnect', async () => {
      const viaA = api(a, token);
      const viaB = api(b, token);
      const theirs = api(b, otherToken);
      const auth = { authorization: `Bearer ${token}` };

      // The endpoint, through B, for every kind of event.
      const hook = await viaB('POST', '/api/v1/webhooks', {
        url: `${receiver.base}/life`,
        events: ['site.*', 'operation.*', 'deployment.*', 'certificate.*'],
      });
      expect(hook.status, JSON.stringify(hook.body)).toBe(201);
      const secret = String(hook.body.secret);
      const ids = await dryRunServer(viaB);
      const otherIds = await dryRunServer(theirs);

      // The stream on A, open before anything happens, until the site is installed.
      let site = '';
      const firstPart = readSse(
        `${a}/api/v1/events`,
        auth,
        (events) => events.some((e) => e.event === 'site.installed' && (e.data as StreamData).subject === site),
        120_000,
      );
      await new Promise((r) => setTimeout(r, 500));
      const created = await viaB('POST', '/api/v1/sites', {
        ...ids,
        type: 'static-html',
        domain: 'life.cluster.example.com',
        ssl: true,
        sslProvider: 'letsencrypt',
        sslEmail: 'ops@cluster.example.com',
        options: {},
      });
      expect(created.status, JSON.stringify(created.body)).toBe(202);
      site = String(created.body.uuid);
      // Another team's site, at the same time, on the other process: neither may see its changes.
      const other = await theirs('POST', '/api/v1/sites', {
        ...otherIds,
        type: 'static-html',
        domain: 'theirs.cluster.example.com',
        ssl: false,
        options: {},
      });
      expect(other.status, JSON.stringify(other.body)).toBe(202);
      const first = await firstPart;
      expect(first.status).toBe(200);
      const lastSeen = first.events.at(-1)?.id as string;

      // Disconnected: a deploy of an uploaded artifact and the certificate again, both through B.
      const archive = tarball({ 'index.html': '<h1>life</h1>' });
      const upload = await fetch(`${b}/api/v1/sites/${site}/deployments`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/gzip' },
        body: new Uint8Array(archive),
      });
      const deployment = (await upload.json()) as { uuid: string; operation?: { uuid: string } };
      expect(upload.status, JSON.stringify(deployment)).toBe(202);
      const deployed = await settle(viaB, `/api/v1/deployments/${deployment.uuid}`, ['succeeded', 'failed', 'cancelled']);
      expect(deployed.status, JSON.stringify(deployed)).toBe('succeeded');
      const ssl = await viaB('POST', `/api/v1/sites/${site}/ssl`);
      expect(ssl.status, JSON.stringify(ssl.body)).toBe(202);
      const sslOperation = String((ssl.body.operation as { uuid: string }).uuid);
      await settle(viaA, `/api/v1/operations/${sslOperation}`, ['succeeded', 'failed']);
      const theirDelete = await theirs('DELETE', `/api/v1/sites/${other.body.uuid}`);
      expect(theirDelete.status).toBe(202);

      // Resumed on A with the last id seen, then the site deleted through A, to its end.
      const secondPart = readSse(
        `${a}/api/v1/events`,
        { ...auth, 'last-event-id': lastSeen },
        (events) => events.some((e) => e.event === 'site.deleted' && (e.data as StreamData).subject === site),
        120_000,
      );
      await new Promise((r) => setTimeout(r, 500));
      const deleted = await viaA('DELETE', `/api/v1/sites/${site}`);
      expect(deleted.status, JSON.stringify(deleted.body)).toBe(202);
      const second = await secondPart;
      const streamed = [...first.events, ...second.events];

      // The receiver, up to the same end.
      const bodyOf = (r: ReceivedWebhook) => JSON.parse(r.body) as EventBody;
      const end = Date.now() + 60_000;
      while (!receiver.received.some((r) => bodyOf(r).type === 'site.deleted') && Date.now() < end)
        await new Promise((r) => setTimeout(r, 50));
      // A little longer: anything sent twice or after the end would show.
      await new Promise((r) => setTimeout(r, 1_500));
      const delivered = receiver.received;

      // The truth: the team's change log, in the order the readers must keep (storage/event-reader.ts).
      const db = new pg.Client({ connectionString: databaseUrl });
      await db.connect();
      const team = (await db.query<{ team_uuid: string }>('SELECT team_uuid FROM sites WHERE uuid = $1', [site])).rows[0]
        ?.team_uuid;
      const log = await db.query<{ seq: string; kind: string; team_uuid: string }>(
        'SELECT seq, kind, team_uuid FROM events ORDER BY xid, seq',
      );
      await db.end();
      const mine = log.rows.filter((r) => r.team_uuid === team).map((r) => `${r.seq} ${r.kind}`);
      const others = log.rows.filter((r) => r.team_uuid !== team).map((r) => Number(r.seq));
      expect(others.length).toBeGreaterThan(0);

      // The stream: every event of the log, once, in order, each id its seq; none of the other team's.
      expect(streamed.map((e: SseEvent) => `${e.id} ${e.event}`)).toEqual(mine);
      for (const e of streamed) expect(Number(e.id)).toBe((e.data as StreamData).seq);
      // The resume started right after the last event seen: nothing lost across the reconnect.
      expect(second.events[0]?.id).toBe(mine[first.events.length]?.split(' ')[0]);

      // The receiver: the same, signed with the endpoint's secret, webhook-id evt_<seq>.
      expect(delivered.map((r) => `${bodyOf(r).data.seq} ${bodyOf(r).type}`)).toEqual(mine);
      for (const r of delivered) {
        expect(r.path).toBe('/life');
        expect(verifyStandardWebhook(secret, r), r.body).toBe(true);
        expect(r.headers['webhook-id']).toBe(`evt_${bodyOf(r).data.seq}`);
      }
      expect(new Set(delivered.map((r) => r.headers['webhook-id'])).size).toBe(delivered.length);
      for (const seq of others) expect(delivered.some((r) => bodyOf(r).data.seq === seq)).toBe(false);

      // A whole life: every kind of change, in its order; everything about this site.
      const kinds = mine.map((m) => m.split(' ')[1]);
      const at = (kind: string) => kinds.indexOf(kind);
      expect(at('site.created')).toBe(0);
      for (const [before, after] of [
        ['site.created', 'site.installed'],
        ['site.installed', 'deployment.succeeded'],
        ['deployment.succeeded', 'site.deleting'],
        ['site.deleting', 'site.deleted'],
      ] as const)
        expect(`${before} < ${after}: ${at(before) >= 0 && at(before) < at(after)}`).toBe(`${before} < ${after}: true`);
      expect(kinds.at(-1)).toBe('site.deleted');
      expect(kinds.filter((k) => k === 'operation.finished').length).toBeGreaterThanOrEqual(4); // create, deploy, ssl, delete
      expect(kinds.filter((k) => k === 'operation.step').length).toBeGreaterThan(4);
      for (const e of streamed) expect((e.data as StreamData).data.site).toBe(site);
      for (const r of delivered) expect(bodyOf(r).data.site).toBe(site);

      // The delivery log, read through A, says the same: one delivered attempt per event (the log is
      // in time order; two attempts within one millisecond may be listed either way round).
      const attempts = await viaA('GET', `/api/v1/webhooks/${hook.body.uuid}/deliveries?limit=500`);
      const rows = attempts.body.data as { event_seq: number; attempt: number; status_code: number }[];
      expect(rows.map((d) => `${d.event_seq} ${d.attempt} ${d.status_code}`).sort()).toEqual(
        mine.map((m) => `${m.split(' ')[0]} 1 204`).sort(),
      );
      // The other team cannot see the endpoint.
      expect((await theirs('GET', `/api/v1/webhooks/${hook.body.uuid}`)).status).toBe(404);
    }, 300_000);
  },
);

/** A .tar.gz of `files`, made with tar as a CI job would. */
function tarball(files: Record<string, string>): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'life-artifact-'));
  try {
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(join(dir, path, '..'), { recursive: true });
      writeFileSync(join(dir, path), content);
    }
    return execFileSync('tar', ['-czf', '-', '-C', dir, '.']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Polls a record until its status is one of `done` (generous: two processes on a loaded machine). */
async function settle(call: ReturnType<typeof api>, path: string, done: string[]): Promise<Record<string, unknown>> {
  const end = Date.now() + 120_000;
  for (;;) {
    const res = await call('GET', path);
    if (done.includes(String(res.body.status))) return res.body;
    if (Date.now() > end) throw new Error(`${path} did not settle: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
