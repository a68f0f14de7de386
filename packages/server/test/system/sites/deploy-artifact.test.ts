import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPLOAD_CHUNK_BYTES } from '../../../src/provisioning/deploy/unpack-artifact.js';
import { createToken } from '../../../src/storage/tokens.js';
import { siteplane } from '../../support/cli-process.js';
import { TEST_DB } from '../../support/test-service.js';
import { requireTestHost } from '../support/test-host.js';
import { describeOperation, Harness, type JsonBody, removeSystemUser, runId } from './support/harness.js';
import { curlUntil, mustRun, run, useHost } from './support/host.js';

/**
 * Issue 11 item 6 end to end: a .tar.gz built on this machine (as CI would) uploaded with
 * POST …/deployments to a real service (listening on loopback), which provisions the pristine test
 * host over SSH: the archive reaches the host in chunks as the site user, is checked and unpacked
 * into a release, goes live, and nginx serves its page. A second upload replaces it; an archive with
 * a link out of the release fails at unpack and leaves the live release serving. The uploads leave
 * nothing in the data directory once their deployments end. Durations are printed, not asserted.
 */
const host = requireTestHost();
useHost(host);
const id = runId();
const user = `spa${id}`;
const domain = `artifact-${id}.siteplane.test`;
const figures: Record<string, unknown> = {};
let h: Harness;
let base: string;
let token: string;
let site: JsonBody;
const scratch = mkdtempSync(join(tmpdir(), 'artifact-e2e-'));
/** SITEPLANE_TEST_DB=postgres: a fresh PostgreSQL database for the service (dropped at the end). */
const PG_ADMIN = process.env.SITEPLANE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const pgName = TEST_DB === 'postgres' ? `sp_artifact_${id}` : null;
async function pgAdmin(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_ADMIN });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/** A .tar.gz of `files` (and symlinks, `->target`), made with GNU tar as a CI job would. */
function tarball(name: string, files: Record<string, string>): Buffer {
  const dir = join(scratch, name);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    if (content.startsWith('->')) symlinkSync(content.slice(2), join(dir, path));
    else writeFileSync(join(dir, path), content);
  }
  return execFileSync('tar', ['-czf', '-', '-C', dir, '.'], { maxBuffer: 64 * 1024 * 1024 });
}

async function upload(archive: Buffer): Promise<{ status: number; body: JsonBody }> {
  const res = await fetch(`${base}/api/v1/sites/${site.uuid}/deployments`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/gzip' },
    body: new Uint8Array(archive),
  });
  return { status: res.status, body: (await res.json()) as JsonBody };
}

async function finished(uuid: string, timeoutMs = 600_000): Promise<JsonBody> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const res = await fetch(`${base}/api/v1/deployments/${uuid}`, { headers: { authorization: `Bearer ${token}` } });
    const d = (await res.json()) as JsonBody;
    if (['succeeded', 'failed', 'cancelled'].includes(d.status)) return d;
    if (Date.now() > until) throw new Error(`deployment ${uuid} stayed ${d.status}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const page = (expected: string) =>
  curlUntil(domain, '/', (a) => a.status === 200 && a.body.trim() === expected, 10_000).then((a) => a.body.trim());
const kept = () => {
  const dir = h.service.useCases.artifacts.dir;
  return existsSync(dir) ? readdirSync(dir).filter((n) => n.endsWith('.tar.gz')) : [];
};

describe.skipIf(!process.env.SITEPLANE_SYSTEM_TESTS)(`artifact deploys end to end on ${TEST_DB} (issue 11 item 6)`, () => {
  beforeAll(async () => {
    if (pgName) await pgAdmin(`CREATE DATABASE ${pgName}`);
    h = await Harness.start({
      username: user,
      env: pgName ? { DATABASE_URL: PG_ADMIN.replace(/\/[^/]*$/, `/${pgName}`) } : {},
    });
    await h.registerServer();
    base = await h.service.app.listen({ host: '127.0.0.1', port: 0 });
    token = (await createToken(h.service.storage.db, { name: `artifact-${id}`, scope: 'write' })).token;
    site = await h.waitInstalled(await h.createSite('static-html', domain), 900_000);
  }, 1_200_000);

  afterAll(async () => {
    console.log(`artifact deploy figures: ${JSON.stringify(figures, null, 2)}`);
    await h?.stop();
    await removeSystemUser(user, id).catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
    if (pgName) await pgAdmin(`DROP DATABASE IF EXISTS ${pgName} WITH (FORCE)`);
  }, 600_000);

  it('deploys an uploaded .tar.gz without a bound source: nginx serves its page, the manifest records its SHA-256', async () => {
    // Bigger than one upload chunk (4 MiB) once compressed, so it reaches the host in several commands.
    const noise = randomBytes(6 * 1024 * 1024).toString('base64');
    const archive = tarball('v1', { 'index.html': `artifact-v1-${id}`, 'assets/noise.txt': noise });
    expect(archive.length).toBeGreaterThan(UPLOAD_CHUNK_BYTES);
    const sha256 = createHash('sha256').update(archive).digest('hex');
    const started = Date.now();
    const answer = await upload(archive);
    expect(answer.status, JSON.stringify(answer.body)).toBe(202);
    expect(answer.body).toMatchObject({ source_kind: 'artifact', artifact: { sha256, bytes: archive.length } });
    const d = await finished(answer.body.uuid);
    figures['artifact v1 deploy ms (upload to succeeded)'] = Date.now() - started;
    figures['artifact v1 bytes'] = archive.length;
    if (d.status !== 'succeeded')
      throw new Error(`deploy ${d.status}: ${describeOperation(await h.operation(d.operation.uuid))}`);
    expect(await page(`artifact-v1-${id}`)).toBe(`artifact-v1-${id}`);
    const steps = (await h.operation(d.operation.uuid)).steps.map((s) => s.name);
    expect(steps).toContain('unpack artifact');
    expect(steps).not.toContain('build');
    expect(steps).not.toContain('fetch');

    const release = `/home/${user}/${domain}/releases/${d.release}`;
    const manifest = JSON.parse((await mustRun('cat', [`${release}/.siteplane-release.json`])).stdout);
    expect(manifest.source).toEqual({ kind: 'artifact', sha256, bytes: archive.length });
    // Unpacked by the site user, not root; the uploaded archive is gone from the host and from here.
    expect((await mustRun('stat', ['-c', '%U', `${release}/index.html`])).stdout.trim()).toBe(user);
    expect((await run('ls', ['--', `${release}.tar.gz`])).code).not.toBe(0);
    expect(kept()).toEqual([]);
  }, 900_000);

  it('`siteplane deploy --artifact --wait` replaces it; an archive with a link out of the release fails and v2 keeps serving', async () => {
    const file = join(scratch, 'dist.tar.gz');
    writeFileSync(file, tarball('v2', { 'index.html': `artifact-v2-${id}` }));
    const cli = await siteplane(['deploy', site.uuid, '--artifact', file, '--wait'], {
      SITEPLANE_URL: base,
      SITEPLANE_TOKEN: token,
    });
    expect(cli.code, `${cli.stdout}\n${cli.stderr}`).toBe(0);
    expect(cli.stdout).toContain('unpacked the artifact into');
    expect(cli.stdout).toContain('operation succeeded');
    expect(await page(`artifact-v2-${id}`)).toBe(`artifact-v2-${id}`);

    const evil = await upload(tarball('evil', { 'index.html': 'evil', 'passwd.html': '->/etc/passwd' }));
    expect(evil.status).toBe(202);
    const failed = await finished(evil.body.uuid);
    expect(failed.status).toBe('failed');
    const op = await h.operation(failed.operation.uuid);
    expect(op.logs.map((l) => l.line).join('\n')).toContain('outside the release');
    expect(await page(`artifact-v2-${id}`)).toBe(`artifact-v2-${id}`);
    expect((await run('ls', ['--', `/home/${user}/${domain}/releases/${failed.release}`])).code).not.toBe(0);
    expect(kept()).toEqual([]);
  }, 900_000);
});
