/**
 * The README's PostgreSQL backup procedure, exercised: `pg_dump -Fc` of a live Siteplane database
 * while a `siteplane serve` takes a stream of site creates, `pg_restore` into a new database, and a
 * service started on that database with the same SITEPLANE_SECRET_KEY finds every site acknowledged
 * before the dump began, and opens the secrets sealed before it.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/crypto/secret-box.js';
import { api, createStream, dryRunServer, serve, siteplane, stop } from '../support/cli-process.js';

const run = promisify(execFile);
const PG_ADMIN = process.env.SITEPLANE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const work = mkdtempSync(join(tmpdir(), 'siteplane-pg-backup-'));
const suffix = randomBytes(6).toString('hex');
const databases = [`sp_backup_${suffix}`, `sp_restored_${suffix}`] as const;
const urlOf = (name: string) => PG_ADMIN.replace(/\/[^/]*$/, `/${name}`);
const children: Awaited<ReturnType<typeof serve>>['child'][] = [];

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_ADMIN });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

afterAll(async () => {
  for (const child of children) await stop(child);
  for (const name of databases) await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  rmSync(work, { recursive: true, force: true });
});

describe('PostgreSQL: pg_dump -Fc of a live service, pg_restore into a new database', { timeout: 180_000 }, () => {
  it('finds every site acknowledged before the dump began, and the key opens the sealed secrets', async () => {
    const [live, restored] = databases;
    await admin(`CREATE DATABASE ${live}`);
    const key = randomBytes(32).toString('base64');
    const env = { DATABASE_URL: urlOf(live), SITEPLANE_SECRET_KEY: key, SITEPLANE_DATA_DIR: join(work, 'data') };
    const service = await serve(env);
    children.push(service.child);
    const token = await siteplane(['token', 'create', '--name', 'ops'], env);
    expect(token.code, token.stderr).toBe(0);
    const call = api(service.base, token.stdout.trim());
    const ssh = await call('POST', '/api/v1/servers', { name: 'ssh-1', ip: '10.1.2.3', connection: 'ssh' });
    expect(ssh.status).toBe(201);

    const stream = createStream(call, await dryRunServer(call));
    await stream.until(40);
    const ackedBeforeDump = [...stream.acknowledged];
    const dump = join(work, 'siteplane.dump');
    await run('pg_dump', ['-Fc', '-f', dump, urlOf(live)]);
    const ackedWhenDumpEnded = stream.acknowledged.length;
    await stream.until(ackedWhenDumpEnded + 20);
    await stream.stop();
    expect(stream.failures).toEqual([]);
    await stop(service.child);

    await admin(`CREATE DATABASE ${restored}`);
    await run('pg_restore', ['--no-owner', '--exit-on-error', '-d', urlOf(restored), dump]);
    const again = await serve({ ...env, DATABASE_URL: urlOf(restored) });
    children.push(again.child);
    const reread = api(again.base, token.stdout.trim());
    const missing: string[] = [];
    for (const uuid of ackedBeforeDump) {
      if ((await reread('GET', `/api/v1/sites/${uuid}`)).status !== 200) missing.push(uuid);
    }
    expect(missing).toEqual([]);
    expect((await reread('GET', `/api/v1/servers/${ssh.body.uuid}`)).status).toBe(200);

    const client = new pg.Client({ connectionString: urlOf(restored) });
    await client.connect();
    const row = await client.query<{ private_key_enc: string }>('SELECT private_key_enc FROM servers WHERE uuid = $1', [
      ssh.body.uuid,
    ]);
    await client.end();
    expect(new SecretBox(Buffer.from(key, 'base64')).open(row.rows[0]?.private_key_enc as string)).toContain('PRIVATE KEY');
    await stop(again.child);
  });
});
