/**
 * Artifact deployments (issue 11 item 6): POST …/deployments with a .tar.gz body. The upload is
 * streamed to the data directory, checked (gzip magic bytes, a tar header inside, the size limit),
 * kept under the deployment's name until the deployment ends, and deployed without building. The
 * deploy steps are the recording stand-in (it checks the file the job is given against the
 * acknowledged SHA-256); the last suite runs the service's own deploy steps on a dry-run server.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, openAsBlob, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { SiteplaneClient } from '@siteplane/sdk';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DB } from '../support/test-service.js';
import { call, type DeployWorld, expectStatus, installedSite, startDeployWorld, waitForDeployment } from './deploy-api.js';

/** A real .tar.gz of a one-page site (GNU tar, as CI would make it). */
function tarball(files: Record<string, string>): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'artifact-'));
  try {
    for (const [name, content] of Object.entries(files)) {
      mkdirSync(join(dir, 'src', name, '..'), { recursive: true });
      writeFileSync(join(dir, 'src', name), content);
    }
    return execFileSync('tar', ['-czf', '-', '-C', join(dir, 'src'), '.']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe(`artifact deployments (${TEST_DB})`, () => {
  let w: DeployWorld;
  let site: string;
  const artifactDir = () => w.s.useCases.artifacts.dir;
  const kept = () => (existsSync(artifactDir()) ? readdirSync(artifactDir()).filter((n) => n.endsWith('.tar.gz')) : []);
  const incoming = () => (existsSync(join(artifactDir(), 'incoming')) ? readdirSync(join(artifactDir(), 'incoming')) : []);

  const upload = (
    uuid: string,
    body: Buffer,
    options: { type?: string; token?: string; headers?: Record<string, string> } = {},
  ): Promise<LightMyRequestResponse> =>
    w.s.app.inject({
      method: 'POST',
      url: `/api/v1/sites/${uuid}/deployments`,
      headers: {
        authorization: `Bearer ${options.token ?? w.s.token}`,
        'content-type': options.type ?? 'application/gzip',
        ...options.headers,
      },
      payload: body,
    });

  beforeAll(async () => {
    w = await startDeployWorld({ env: { SITEPLANE_ARTIFACT_MAX_BYTES: String(64 * 1024) } });
    // No source bound: an artifact needs none.
    site = await installedSite(w, 'nodejs-static', 'artifact.example.com', { artifactPath: 'dist' });
  }, 60_000);
  afterAll(async () => w?.stop());

  it('answers 202, deploys the upload without building and removes it once the deployment ends', async () => {
    const archive = tarball({ 'index.html': '<h1>built by CI</h1>', 'assets/app.js': 'console.log(1)' });
    const res = await expectStatus(upload(site, archive), 202);
    const d = res.json();
    expect(d).toMatchObject({
      site,
      status: 'queued',
      trigger: 'manual',
      source_kind: 'artifact',
      artifact: { sha256: sha256(archive), bytes: archive.length },
      branch: null,
      requested_commit: null,
    });
    expect(res.headers.location).toBe(`/api/v1/deployments/${d.uuid}`);
    const done = await waitForDeployment(w, d.uuid, ['succeeded', 'failed']);
    expect(done.status, JSON.stringify(done)).toBe('succeeded');
    const { plan } = w.steps.deploys.at(-1) ?? { plan: null };
    expect(plan?.source).toMatchObject({ kind: 'artifact', sha256: sha256(archive), bytes: archive.length });
    // Built by CI: no build command and no install hook (`npm ci` is an after-fetch default of the type).
    expect(plan?.buildCommand).toBeNull();
    expect(plan?.hooks.map((h) => h.name)).toEqual([]);
    const op = (await expectStatus(call(w.s, 'GET', `/api/v1/operations/${d.operation.uuid}?limit=1000`), 200)).json();
    expect(op.logs.map((l: { line: string }) => l.line).join('\n')).toContain(`unpack artifact ${sha256(archive)}`);
    const until = Date.now() + 5_000;
    while (kept().length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(kept()).toEqual([]);
    expect(incoming()).toEqual([]);
  });

  it('skips the install stage only: a Laravel artifact runs its before-activate hooks, not composer install', async () => {
    const laravel = await installedSite(w, 'laravel', 'laravel-artifact.example.com', { phpVersion: '8.2' });
    const d = (await expectStatus(upload(laravel, tarball({ 'public/index.php': '<?php echo 1;' })), 202)).json();
    expect((await waitForDeployment(w, d.uuid, ['succeeded', 'failed'])).status).toBe('succeeded');
    const { plan } = w.steps.deploys.at(-1) ?? { plan: null };
    expect(plan?.hooks.map((h) => `${h.stage} ${h.name} ${h.enabled}`)).toEqual([
      'before-activate migrations false',
      'before-activate caches true',
    ]);
    expect(plan?.sharedPaths.map((p) => p.path)).toEqual(['.env', 'storage']);
  });

  it('takes application/x-gzip and application/octet-stream too; the same site still deploys git with JSON', async () => {
    for (const type of ['application/x-gzip', 'application/octet-stream']) {
      const d = (await expectStatus(upload(site, tarball({ 'index.html': type }), { type }), 202)).json();
      expect((await waitForDeployment(w, d.uuid, ['succeeded', 'failed'])).status).toBe('succeeded');
    }
    // Without a source a JSON deploy is still source_missing, saying an upload would do.
    const json = await expectStatus(call(w.s, 'POST', `/api/v1/sites/${site}/deployments`, { payload: {} }), 422);
    expect(json.json()).toMatchObject({ code: 'source_missing' });
    expect(json.json().detail).toContain('.tar.gz');
  });

  it('refuses other media types with 415, a body over the limit with 413, and a body that is not a gzip’d tar with 422', async () => {
    const before = w.steps.deploys.length;
    const text = await expectStatus(upload(site, Buffer.from('hello'), { type: 'text/plain' }), 415);
    expect(text.headers['content-type']).toContain('application/problem+json');
    expect(text.json()).toMatchObject({ code: 'unsupported_media_type' });
    expect(text.json().detail).toContain('application/gzip');
    // Declared too large: refused before a byte is read.
    const big = Buffer.alloc(64 * 1024 + 1, 7);
    const large = await expectStatus(upload(site, big), 413);
    expect(large.json()).toMatchObject({ code: 'body_too_large' });
    expect(large.json().detail).toContain('SITEPLANE_ARTIFACT_MAX_BYTES');
    // Streamed without a length (chunked): counted as it comes.
    const chunked = await expectStatus(
      w.s.app.inject({
        method: 'POST',
        url: `/api/v1/sites/${site}/deployments`,
        headers: { authorization: `Bearer ${w.s.token}`, 'content-type': 'application/gzip', 'transfer-encoding': 'chunked' },
        payload: Readable.from(
          (function* () {
            for (let i = 0; i < 20; i++) yield Buffer.concat([gzipSync(Buffer.alloc(10)), Buffer.alloc(4096, i)]);
          })(),
        ),
      }),
      413,
    );
    expect(chunked.json()).toMatchObject({ code: 'body_too_large' });
    const notGzip = await expectStatus(upload(site, Buffer.from('PK\u0003\u0004 a zip file')), 422);
    expect(notGzip.json()).toMatchObject({ code: 'invalid_artifact' });
    expect(notGzip.json().detail).toContain('1f 8b');
    const notTar = await expectStatus(upload(site, gzipSync(Buffer.alloc(2048, 'x'))), 422);
    expect(notTar.json()).toMatchObject({ code: 'invalid_artifact' });
    expect(notTar.json().detail).toContain('tar');
    const empty = await expectStatus(upload(site, Buffer.alloc(0)), 422);
    expect(empty.json()).toMatchObject({ code: 'invalid_artifact' });
    // Nothing started, nothing kept.
    expect(w.steps.deploys.length).toBe(before);
    expect(kept()).toEqual([]);
    expect(incoming()).toEqual([]);
  });

  it('answers 413 over a real socket while a chunked upload is still being sent, and keeps nothing', async () => {
    const address = await w.s.app.listen({ host: '127.0.0.1', port: 0 });
    const { hostname, port } = new URL(address);
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: hostname,
          port: Number(port),
          method: 'POST',
          path: `/api/v1/sites/${site}/deployments`,
          headers: { authorization: `Bearer ${w.s.token}`, 'content-type': 'application/gzip' },
        },
        (res) => {
          let body = '';
          res.on('data', (c: Buffer) => {
            body += c.toString();
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.on('error', reject);
      // 1 MiB in 4 KiB chunks without a Content-Length: the limit (64 KiB) is found while counting.
      req.write(gzipSync(Buffer.alloc(10)));
      let sent = 0;
      const more = () => {
        while (sent < 256) {
          sent++;
          if (!req.write(Buffer.alloc(4096, sent))) return void req.once('drain', more);
        }
        req.end();
      };
      more();
    });
    expect(answer.status).toBe(413);
    expect(JSON.parse(answer.body)).toMatchObject({ code: 'body_too_large' });
    expect(kept()).toEqual([]);
    expect(incoming()).toEqual([]);
  });

  it('is 404 for another tenant’s site (nothing written), 403 for a read-only token, 401 without a token', async () => {
    const archive = tarball({ 'index.html': 'x' });
    const other = await expectStatus(upload(site, archive, { token: w.s.otherTenantToken }), 404);
    expect(other.json()).toMatchObject({ code: 'not_found' });
    await expectStatus(upload(site, archive, { token: w.s.readToken }), 403);
    await expectStatus(upload(site, archive, { token: 'sp_nope' }), 401);
    expect(kept()).toEqual([]);
    expect(incoming()).toEqual([]);
  });

  it('replays the same archive with the same Idempotency-Key; another archive with it is 422 idempotency_key_reused', async () => {
    const archive = tarball({ 'index.html': 'idempotent' });
    const key = { 'idempotency-key': 'artifact-once-1' };
    w.steps.gate = new Promise(() => {});
    try {
      const first = await expectStatus(upload(site, archive, { headers: key }), 202);
      const replay = await expectStatus(upload(site, archive, { headers: key }), 202);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.json().uuid).toBe(first.json().uuid);
      const reused = await expectStatus(upload(site, tarball({ 'index.html': 'another' }), { headers: key }), 422);
      expect(reused.json()).toMatchObject({ code: 'idempotency_key_reused' });
      // One archive kept, for the one deployment; the replayed and refused uploads are gone.
      expect(kept()).toEqual([`${first.json().uuid}.tar.gz`]);
      expect(incoming()).toEqual([]);
      // A newer upload supersedes a queued one, whose archive goes at once.
      await waitForDeployment(w, first.json().uuid, ['running']);
      const second = (await expectStatus(upload(site, archive), 202)).json();
      const third = (await expectStatus(upload(site, archive), 202)).json();
      expect((await waitForDeployment(w, second.uuid, ['cancelled'])).superseded_by).toBe(third.uuid);
      expect(kept().sort()).toEqual([`${first.json().uuid}.tar.gz`, `${third.uuid}.tar.gz`].sort());
      // Cancelling the queued one removes its archive too.
      await expectStatus(call(w.s, 'POST', `/api/v1/deployments/${third.uuid}/cancel`, { payload: {} }), 200);
      expect(kept()).toEqual([`${first.json().uuid}.tar.gz`]);
      await expectStatus(call(w.s, 'POST', `/api/v1/deployments/${first.json().uuid}/cancel`, { payload: {} }), 202);
      expect((await waitForDeployment(w, first.json().uuid, ['cancelled'])).status).toBe('cancelled');
      const until = Date.now() + 5_000;
      while (kept().length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(kept()).toEqual([]);
    } finally {
      w.steps.gate = null;
    }
  });
});

describe(`the SDK's deployArtifact (${TEST_DB})`, () => {
  let w: DeployWorld;
  beforeAll(async () => {
    w = await startDeployWorld();
  }, 60_000);
  afterAll(async () => w?.stop());

  it('uploads a Blob read from a file (as fs.openAsBlob gives it) and replays it with its Idempotency-Key', async () => {
    // The client's fetch, answered by the service in process; the body's bytes as the client sent them.
    const fetchViaInject: typeof fetch = async (input, init) => {
      const url = new URL(String(input));
      const body = init?.body;
      const payload =
        body instanceof Blob ? Buffer.from(await body.arrayBuffer()) : body instanceof Uint8Array ? Buffer.from(body) : body;
      const res = await w.s.app.inject({
        method: (init?.method ?? 'GET') as 'POST',
        url: url.pathname + url.search,
        headers: init?.headers as Record<string, string>,
        ...(payload === undefined || payload === null ? {} : { payload: payload as Buffer | string }),
      });
      return new Response(res.body, { status: res.statusCode, headers: res.headers as HeadersInit });
    };
    const client = new SiteplaneClient({ baseUrl: 'http://siteplane.test', token: w.s.token, fetch: fetchViaInject });
    const site = await installedSite(w, 'static-html', 'sdk-artifact.example.com');
    const archive = tarball({ 'index.html': 'from the SDK' });
    const dir = mkdtempSync(join(tmpdir(), 'artifact-sdk-'));
    try {
      writeFileSync(join(dir, 'dist.tar.gz'), archive);
      const blob = await openAsBlob(join(dir, 'dist.tar.gz'));
      const d = await client.deployArtifact(site, blob, 'sdk-artifact-1');
      expect(d).toMatchObject({ source_kind: 'artifact', artifact: { sha256: sha256(archive), bytes: archive.length } });
      const again = await client.deployArtifact(site, new Uint8Array(archive), 'sdk-artifact-1');
      expect(again.uuid).toBe(d.uuid);
      expect((await waitForDeployment(w, String(d.uuid), ['succeeded', 'failed'])).status).toBe('succeeded');
      await expect(client.deployArtifact(site, new Uint8Array(Buffer.from('not gzip')))).rejects.toMatchObject({
        status: 422,
        problem: { code: 'invalid_artifact' },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe(`artifact deployments with the service's own deploy steps (${TEST_DB})`, () => {
  let w: DeployWorld;
  beforeAll(async () => {
    w = await startDeployWorld({ deploySteps: false });
  }, 60_000);
  afterAll(async () => w?.stop());

  it('uploads the archive as the site user and unpacks it with its SHA-256: recorded on a dry-run server', async () => {
    const site = await installedSite(w, 'static-html', 'dry.example.com');
    const archive = tarball({ 'index.html': '<p>dry</p>' });
    const d = (
      await expectStatus(
        w.s.app.inject({
          method: 'POST',
          url: `/api/v1/sites/${site}/deployments`,
          headers: { authorization: `Bearer ${w.s.token}`, 'content-type': 'application/gzip' },
          payload: archive,
        }),
        202,
      )
    ).json();
    const done = await waitForDeployment(w, d.uuid, ['succeeded', 'failed']);
    const op = (await expectStatus(call(w.s, 'GET', `/api/v1/operations/${d.operation.uuid}?limit=1000`), 200)).json();
    const steps = op.steps.map((st: { name: string }) => st.name);
    expect(steps.slice(0, 2)).toEqual(['ensure git', 'unpack artifact']);
    expect(steps).not.toContain('build');
    const log = op.logs.map((l: { line: string }) => l.line).join('\n');
    expect(log).toMatch(/would run: .*base64 -d > .*upload .*releases\/.*\.tar\.gz new/s);
    expect(log).toContain(`"stdin":"<redacted ${archive.toString('base64').length} bytes>"`);
    expect(log).toContain(sha256(archive));
    expect(['succeeded', 'failed']).toContain(done.status);
  });
});
