import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signHmacSha256 } from '../../../src/domain/webhooks/signatures.js';
import { createToken } from '../../../src/storage/tokens.js';
import { TEST_DB } from '../../support/test-service.js';
import { fixture } from '../../webhooks/hook-cases.js';
import { requireTestHost } from '../support/test-host.js';
import { serveRepositories, stopServingRepositories } from './support/git-daemon.js';
import { commitAndPush } from './support/git-work-tree.js';
import { describeOperation, Harness, type JsonBody, removeSystemUser, runId } from './support/harness.js';
import { curlUntil, run, useHost } from './support/host.js';

/**
 * Issue 11 end to end: the deployments control plane, the deploy steps and push webhooks together,
 * through the HTTP API of a real service (in-process, app.inject) provisioning the pristine test
 * host over SSH. The code comes from bare repositories on the host served by `git daemon` on all
 * its addresses: the profile's URL (the host's address) is checked with `git ls-remote` from this
 * machine at PUT …/source and fetched by the host itself during the deploy. A static-html and a
 * NodeJS SSR site: deploy v1 (the node app prints a runtime variable), v2 by the trigger URL and
 * by a signed GitHub push, rollback to v1, and a cancelled deploy that leaves the live release
 * serving. Durations are printed, not asserted.
 */
const host = requireTestHost();
useHost(host);
const id = runId();
const user = `spe${id}`;
const GIT_BASE = `/srv/siteplane-e2e-git-${id}`;
const WORK = `/srv/siteplane-e2e-work-${id}`;
const GIT_PORT = 9418;
const repoUrl = (name: string) => `git://${host.address}:${GIT_PORT}/acme/${name}.git`;
const domain = (label: string) => `${label}-${id}.siteplane.test`;
const figures: Record<string, unknown> = {};

let h: Harness;
/** SITEPLANE_TEST_DB=postgres: a fresh PostgreSQL database for the service (dropped at the end). */
const PG_ADMIN = process.env.SITEPLANE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const pgName = TEST_DB === 'postgres' ? `sp_e2e_${id}` : null;
async function pgAdmin(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}
/** A write token of its own: the harness's one serves only its GET/POST/DELETE client. */
let token: string;

interface Answer {
  status: number;
  body: JsonBody;
}

/** The service's API over a real socket (listening on loopback), as a client and a provider reach it. */
let base: string;

/** Any method, JSON or a raw body with its own headers (webhooks are verified over raw bytes). */
async function api(
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  payload?: unknown,
  options: { raw?: string; headers?: Record<string, string>; auth?: boolean } = {},
): Promise<Answer> {
  const json = payload === undefined ? undefined : JSON.stringify(payload);
  const res = await fetch(`${base}${url}`, {
    method,
    headers: {
      ...(options.auth === false ? {} : { authorization: `Bearer ${token}` }),
      ...(json === undefined ? {} : { 'content-type': 'application/json' }),
      ...options.headers,
    },
    ...(options.raw !== undefined ? { body: options.raw } : json !== undefined ? { body: json } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as JsonBody) : {} };
}

interface SseEvent {
  id: string;
  event: string;
  data: JsonBody;
}

/** Follows GET /operations/<uuid>/events until the stream ends (after its `end` event). */
async function followEvents(operation: string): Promise<SseEvent[]> {
  const res = await fetch(`${base}/api/v1/operations/${operation}/events`, { headers: { authorization: `Bearer ${token}` } });
  if (res.status !== 200 || !res.body) throw new Error(`events: ${res.status} ${await res.text()}`);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const events: SseEvent[] = [];
  let buffer = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body) {
    buffer += decoder.decode(chunk as Uint8Array, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const field = (name: string) =>
        block
          .split('\n')
          .filter((l) => l.startsWith(`${name}: `))
          .map((l) => l.slice(name.length + 2))
          .join('\n');
      if (field('event') !== '') events.push({ id: field('id'), event: field('event'), data: JSON.parse(field('data')) });
    }
  }
  return events;
}

async function must(status: number, answer: Promise<Answer>, what: string): Promise<JsonBody> {
  const res = await answer;
  if (res.status !== status) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** Polls the deployment until it is finished; returns it (and how long it took from the call). */
async function finished(uuid: string, timeoutMs = 600_000): Promise<JsonBody> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const d = await must(200, api('GET', `/api/v1/deployments/${uuid}`), `GET deployment ${uuid}`);
    if (['succeeded', 'failed', 'cancelled'].includes(d.status)) return d;
    if (Date.now() > until) throw new Error(`deployment ${uuid} stayed ${d.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function succeeded(uuid: string): Promise<JsonBody> {
  const d = await finished(uuid);
  if (d.status !== 'succeeded')
    throw new Error(`deployment ${d.status}: ${describeOperation(await h.operation(d.operation.uuid))}`);
  return d;
}

/** Commits files into the work tree `name`, pushes main to the bare repository; returns the sha. */
async function commit(name: string, files: Record<string, string>, message: string): Promise<string> {
  return commitAndPush(`${WORK}/${name}`, `${GIT_BASE}/acme/${name}.git`, files, message);
}

const staticFiles = (v: string) => ({ 'index.html': `static-${v}` });
const nodeFiles = (v: string) => ({
  'package.json': JSON.stringify({ name: 'app', version: '1.0.0', main: 'server.js' }),
  'package-lock.json': JSON.stringify({
    name: 'app',
    version: '1.0.0',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: 'app', version: '1.0.0' } },
  }),
  'server.js': `require('node:http').createServer((q, r) => r.end('node-${v} ' + (process.env.GREETING || 'unset'))).listen(Number(process.env.PORT), '127.0.0.1');\n`,
});

const body = (site: JsonBody, expected: string) =>
  curlUntil(site.domain, '/', (a) => a.status === 200 && a.body.trim() === expected, 10_000).then((a) => a.body.trim());

describe.skipIf(!process.env.SITEPLANE_SYSTEM_TESTS)(`deployments end to end through the API on ${TEST_DB} (issue 11)`, () => {
  let staticSite: JsonBody;
  let nodeSite: JsonBody;
  let profile: JsonBody;
  let v1: string;
  let v2: string;
  let nodeV1: string;
  const deployments: Record<string, JsonBody> = {};

  beforeAll(async () => {
    await serveRepositories(GIT_BASE, WORK, ['static', 'node'], GIT_PORT);
    if (pgName) await pgAdmin(`CREATE DATABASE ${pgName}`);
    h = await Harness.start({
      username: user,
      env: pgName ? { DATABASE_URL: PG_ADMIN.replace(/\/[^/]*$/, `/${pgName}`) } : {},
    });
    await h.registerServer();
    base = await h.service.app.listen({ host: '127.0.0.1', port: 0 });
    token = (await createToken(h.service.storage.db, { name: `e2e-${id}`, scope: 'write' })).token;
  }, 900_000);

  afterAll(async () => {
    console.log(`deploy end-to-end figures: ${JSON.stringify(figures, null, 2)}`);
    await stopServingRepositories(GIT_BASE, WORK);
    await h?.stop();
    await removeSystemUser(user, id).catch(() => undefined);
    if (pgName) await pgAdmin(`DROP DATABASE IF EXISTS ${pgName} WITH (FORCE)`);
  }, 600_000);

  it('creates a static-html and a NodeJS SSR site and binds them to a git profile', async () => {
    const [s, n] = await Promise.all([h.createSite('static-html', domain('static')), h.createSite('nodejs-ssr', domain('node'))]);
    [staticSite, nodeSite] = await Promise.all([h.waitInstalled(s, 900_000), h.waitInstalled(n, 900_000)]);
    v1 = await commit('static', staticFiles('v1'), 'static v1');
    nodeV1 = await commit('node', nodeFiles('v1'), 'node v1');

    profile = await must(
      201,
      api('POST', '/api/v1/vc-profiles', {
        provider: 'git',
        name: `host-${id}`,
        repositories: [repoUrl('static'), repoUrl('node')],
      }),
      'POST /vc-profiles',
    );
    for (const [site, repo] of [
      [staticSite, 'acme/static'],
      [nodeSite, 'acme/node'],
    ] as const) {
      const source = await must(
        200,
        api('PUT', `/api/v1/sites/${site.uuid}/source`, { vcProfile: profile.uuid, repository: repo, branch: 'main' }),
        `PUT source ${repo}`,
      );
      expect(source).toMatchObject({ repository: repo, branch: 'main', auth: 'none' });
    }
    const env = await must(
      200,
      api('PATCH', `/api/v1/sites/${nodeSite.uuid}/environment`, {
        set: { GREETING: { value: 'hello-from-env', scope: 'runtime' } },
      }),
      'PATCH environment',
    );
    expect(env.deploy_needed).toBe(true);
    expect(JSON.stringify(env)).not.toContain('hello-from-env');
  }, 1_800_000);

  it('deploys v1 to both sites: the pages answer, the node app sees its variable, the record names the commit', async () => {
    const started = Date.now();
    const [ds, dn] = await Promise.all(
      [staticSite, nodeSite].map((site) =>
        must(202, api('POST', `/api/v1/sites/${site.uuid}/deployments`, {}), 'POST deployments'),
      ),
    );
    expect(ds).toMatchObject({ trigger: 'manual', status: expect.stringMatching(/^(queued|running)$/) });
    // The node deploy followed live over the event stream, from its start to its end.
    const nodeEvents = followEvents(dn!.operation.uuid);
    const [s1, n1] = await Promise.all([succeeded(ds!.uuid), succeeded(dn!.uuid)]);
    figures['deploy v1 (both sites, in parallel) ms'] = Date.now() - started;
    figures['deploy v1 static duration_ms'] = s1.duration_ms;
    figures['deploy v1 node duration_ms'] = n1.duration_ms;
    deployments.staticV1 = s1;
    expect(s1.commit).toEqual({ sha: v1, message: 'static v1', author: 'Ada Tester <ada@example.test>' });
    expect(n1.commit).toMatchObject({ message: 'node v1', author: 'Ada Tester <ada@example.test>' });
    expect(await body(staticSite, 'static-v1')).toBe('static-v1');
    expect(await body(nodeSite, 'node-v1 hello-from-env')).toBe('node-v1 hello-from-env');
    const env = await must(200, api('GET', `/api/v1/sites/${nodeSite.uuid}/environment`), 'GET environment');
    expect(env.deploy_needed).toBe(false);

    const events = await nodeEvents;
    expect(events.at(-1)).toMatchObject({ event: 'end', data: { status: 'succeeded' } });
    const steps = new Set(events.filter((e) => e.event === 'step').map((e) => `${e.data.name} ${e.data.status}`));
    expect([...steps].filter((s) => s.endsWith(' succeeded')).length).toBeGreaterThan(3);
    expect(events.some((e) => e.event === 'log' && /commit [0-9a-f]{12} by Ada Tester/.test(e.data.line))).toBe(true);
    // The runtime variable's value reaches the app, never the operation's log.
    expect(JSON.stringify(events)).not.toContain('hello-from-env');
    figures['node v1 deploy: events streamed'] = events.length;
  }, 1_800_000);

  it('deploys v2 from the trigger URL and from a signed GitHub push', async () => {
    v2 = await commit('static', staticFiles('v2'), 'static v2');
    const hook = await must(201, api('POST', `/api/v1/sites/${staticSite.uuid}/webhook`, {}), 'POST webhook');
    expect(hook.trigger_url).toMatch(/\/api\/v1\/hooks\/sph_/);
    expect(hook.secret).toEqual(expect.any(String));

    const started = Date.now();
    const triggered = await must(202, api('POST', new URL(hook.trigger_url).pathname, {}, { auth: false }), 'POST trigger URL');
    const viaTrigger = await succeeded(triggered.deployment);
    figures['deploy v2 by trigger URL ms'] = Date.now() - started;
    expect(viaTrigger).toMatchObject({ trigger: 'webhook', commit: { sha: v2, message: 'static v2' } });
    expect(await body(staticSite, 'static-v2')).toBe('static-v2');
    deployments.staticV2 = viaTrigger;

    const github = fixture('github-push');
    const push = {
      ...github,
      ref: 'refs/heads/main',
      before: v1,
      after: v2,
      head_commit: { ...(github.head_commit as object), id: v2, message: 'static v2' },
      commits: [],
    };
    const raw = JSON.stringify(push);
    const signed = await must(
      202,
      api('POST', `/api/v1/hooks/github/${staticSite.uuid}`, undefined, {
        raw,
        auth: false,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'GitHub-Hookshot/044aadd',
          'x-github-event': 'push',
          'x-github-delivery': crypto.randomUUID(),
          'x-hub-signature-256': `sha256=${signHmacSha256(raw, hook.secret)}`,
        },
      }),
      'POST GitHub hook',
    );
    const viaGithub = await succeeded(signed.deployment);
    expect(viaGithub).toMatchObject({ trigger: 'webhook', requested_commit: v2, commit: { sha: v2 } });
    expect(await body(staticSite, 'static-v2')).toBe('static-v2');

    // A wrong signature deploys nothing.
    const forged = await api('POST', `/api/v1/hooks/github/${staticSite.uuid}`, undefined, {
      raw,
      auth: false,
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'push',
        'x-github-delivery': crypto.randomUUID(),
        'x-hub-signature-256': `sha256=${signHmacSha256(raw, 'not-the-secret')}`,
      },
    });
    expect(forged.status).toBe(404);
  }, 1_800_000);

  it('rolls back to v1 and lists every deployment with its status', async () => {
    const started = Date.now();
    const rb = await must(
      202,
      api('POST', `/api/v1/sites/${staticSite.uuid}/rollback`, { release: deployments.staticV1!.release }),
      'POST rollback',
    );
    const done = await succeeded(rb.uuid);
    figures['rollback ms'] = Date.now() - started;
    figures['rollback duration_ms'] = done.duration_ms;
    expect(done).toMatchObject({ trigger: 'rollback', release: deployments.staticV1!.release });
    expect(await body(staticSite, 'static-v1')).toBe('static-v1');

    const list = await must(200, api('GET', `/api/v1/sites/${staticSite.uuid}/deployments`), 'GET deployments');
    expect(list.data.map((d: JsonBody) => `${d.trigger} ${d.status}`)).toEqual([
      'manual succeeded',
      'webhook succeeded',
      'webhook succeeded',
      'rollback succeeded',
    ]);
  }, 1_800_000);

  it('cancels a deploy whose hook sleeps: it ends cancelled and the live release keeps answering', async () => {
    await must(
      200,
      api('PATCH', `/api/v1/sites/${staticSite.uuid}/deploy-settings`, {
        hooks: [{ name: 'slow hook', command: 'sleep 93', stage: 'after-fetch', enabled: true }],
      }),
      'PATCH deploy-settings',
    );
    const d = await must(202, api('POST', `/api/v1/sites/${staticSite.uuid}/deployments`, {}), 'POST deployments');
    const until = Date.now() + 300_000;
    while ((await run('pgrep', ['-u', user, '-f', 'sleep 93'])).stdout.trim() === '') {
      const now = await must(200, api('GET', `/api/v1/deployments/${d.uuid}`), 'GET deployment');
      if (['succeeded', 'failed', 'cancelled'].includes(now.status) || Date.now() > until) {
        throw new Error(`the slow hook never ran: ${describeOperation(await h.operation(d.operation.uuid))}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    // Two pushes while it runs: the first queued one collapses into the second, which is then cancelled before it runs.
    const hook = await must(200, api('POST', `/api/v1/sites/${staticSite.uuid}/webhook`, { rotate: ['trigger_url'] }), 'rotate');
    const trigger = new URL(hook.trigger_url).pathname;
    const first = await must(202, api('POST', trigger, {}, { auth: false }), 'trigger 1');
    const second = await must(202, api('POST', trigger, {}, { auth: false }), 'trigger 2');
    expect(first.deployment).not.toBe(second.deployment);
    const collapsed = await must(200, api('GET', `/api/v1/deployments/${first.deployment}`), 'GET collapsed');
    expect(collapsed).toMatchObject({ status: 'cancelled', superseded_by: second.deployment });
    const dropped = await must(200, api('POST', `/api/v1/deployments/${second.deployment}/cancel`, {}), 'cancel queued');
    expect(dropped.status).toBe('cancelled');

    const cancelAt = Date.now();
    const asked = await must(202, api('POST', `/api/v1/deployments/${d.uuid}/cancel`, {}), 'POST cancel');
    expect(asked.cancel_requested).toBe(true);
    const end = await finished(d.uuid, 120_000);
    figures['cancel → deployment ended ms'] = Date.now() - cancelAt;
    expect(end.status).toBe('cancelled');
    expect((await run('pgrep', ['-u', user, '-f', 'sleep 93'])).stdout.trim()).toBe('');
    expect(await body(staticSite, 'static-v1')).toBe('static-v1');
    const again = await api('POST', `/api/v1/deployments/${d.uuid}/cancel`, {});
    expect(again).toMatchObject({ status: 409, body: { code: 'deployment_finished' } });

    const list = await must(200, api('GET', `/api/v1/sites/${staticSite.uuid}/deployments`), 'GET deployments');
    expect(list.data.slice(-3).map((x: JsonBody) => `${x.uuid} ${x.status}`)).toEqual(
      [d.uuid, first.deployment, second.deployment].map((u) => `${u} cancelled`),
    );
    const deliveries = await must(200, api('GET', `/api/v1/sites/${staticSite.uuid}/webhook/deliveries`), 'GET deliveries');
    figures['webhook deliveries (provider outcome reason)'] = deliveries.data.map((x: JsonBody) =>
      `${x.provider} ${x.outcome} ${x.reason ?? ''}`.trim(),
    );
  }, 900_000);
  it('a failing hook fails the deploy and v1 keeps serving; rollback still reaches every release the API offers after a prune', async () => {
    await must(
      200,
      api('PATCH', `/api/v1/sites/${staticSite.uuid}/deploy-settings`, {
        hooks: [{ name: 'fails', command: 'echo broken >&2; exit 3', stage: 'before-activate', enabled: true }],
        keepReleases: 3,
      }),
      'PATCH deploy-settings',
    );
    const failed = await finished(
      (await must(202, api('POST', `/api/v1/sites/${staticSite.uuid}/deployments`, {}), 'POST deployments')).uuid,
    );
    expect(failed.status).toBe('failed');
    expect((await h.operation(failed.operation.uuid)).error).toMatchObject({ step: 'hook: fails', exit_code: 3 });
    expect(await body(staticSite, 'static-v1')).toBe('static-v1');

    // On disk now: the placeholder, three successful releases, the cancelled and the failed ones; v1 is live.
    await must(200, api('PATCH', `/api/v1/sites/${staticSite.uuid}/deploy-settings`, { hooks: [] }), 'PATCH deploy-settings');
    await commit('static', staticFiles('v3'), 'static v3');
    const v3 = await succeeded(
      (await must(202, api('POST', `/api/v1/sites/${staticSite.uuid}/deployments`, {}), 'POST deployments')).uuid,
    );
    expect(await body(staticSite, 'static-v3')).toBe('static-v3');
    const list = await must(200, api('GET', `/api/v1/sites/${staticSite.uuid}/deployments`), 'GET deployments');
    const kept = (list.data as JsonBody[])
      .filter((d) => d.trigger !== 'rollback' && d.status === 'succeeded')
      .slice(-3)
      .map((d) => d.release as string);
    expect(kept.at(-1)).toBe(v3.release);
    const onDisk = (await run('ls', ['-1', '--', `/home/${user}/${staticSite.domain}/releases`])).stdout.split('\n');
    figures['static releases on disk after the v3 deploy (keep 3)'] = onDisk.filter(Boolean);
    for (const release of kept.slice(0, -1).reverse()) {
      const rb = await must(202, api('POST', `/api/v1/sites/${staticSite.uuid}/rollback`, { release }), `rollback to ${release}`);
      await succeeded(rb.uuid);
    }
    expect(await body(staticSite, 'static-v2')).toBe('static-v2');
  }, 900_000);

  it('node: a new variable and v2, rollback to the release with its own variables, then an older commit on request', async () => {
    await must(
      200,
      api('PATCH', `/api/v1/sites/${nodeSite.uuid}/environment`, {
        set: { GREETING: { value: 'second-value', scope: 'runtime' } },
      }),
      'PATCH environment',
    );
    const nodeV2 = await commit('node', nodeFiles('v2'), 'node v2');
    const d2 = await succeeded(
      (await must(202, api('POST', `/api/v1/sites/${nodeSite.uuid}/deployments`, {}), 'POST deployments')).uuid,
    );
    expect(d2.commit).toMatchObject({ sha: nodeV2 });
    expect(await body(nodeSite, 'node-v2 second-value')).toBe('node-v2 second-value');

    // The previous release by default; it runs with the variables it was deployed with.
    const started = Date.now();
    const rb = await succeeded(
      (await must(202, api('POST', `/api/v1/sites/${nodeSite.uuid}/rollback`, {}), 'POST rollback')).uuid,
    );
    figures['node rollback ms'] = Date.now() - started;
    expect(rb.rollback).toMatchObject({ from_release: d2.release, environment_changed: true });
    expect(await body(nodeSite, 'node-v1 hello-from-env')).toBe('node-v1 hello-from-env');

    // An older commit asked for by sha is a new release with today's variables.
    const older = await succeeded(
      (await must(202, api('POST', `/api/v1/sites/${nodeSite.uuid}/deployments`, { commit: nodeV1 }), 'POST deployments')).uuid,
    );
    expect(older).toMatchObject({ requested_commit: nodeV1, commit: { sha: nodeV1, message: 'node v1' } });
    expect(await body(nodeSite, 'node-v1 second-value')).toBe('node-v1 second-value');
  }, 900_000);

  it('deletes both deployed sites: their releases, mirror and processes go with them', async () => {
    for (const site of [staticSite, nodeSite]) {
      const del = await h.deleteSite(site.uuid);
      await h.waitGone(site, del.operation.uuid, 300_000);
      expect((await run('ls', ['-A', '--', `/home/${user}/${site.domain}`])).code).not.toBe(0);
      expect((await api('GET', `/api/v1/sites/${site.uuid}/deployments`)).status).toBe(404);
    }
    expect((await run('pgrep', ['-u', user, '-f', 'server.js'])).stdout.trim()).toBe('');
  }, 900_000);
});
