/**
 * `siteplane backup` and `siteplane restore` as an operator runs them: the real command (node with
 * tsx's loader, as `npx tsx packages/cli/src/main.ts` does) as child processes, next to a real
 * `siteplane serve` taking a stream of site creates over HTTP. Proves the backup is taken while
 * writes go on and holds every site acknowledged before it began, that the restored database is
 * whole, is migrated forward, and opens with the key kept beside it — and each refusal.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { Kysely, Migrator, SqliteDialect } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox } from '../../src/crypto/secret-box.js';
import { migrations } from '../../src/storage/migrations/index.js';
import { api, createStream, dryRunServer, type Run, serve as serveWith, siteplane, stop } from '../support/cli-process.js';

const work = mkdtempSync(join(tmpdir(), 'siteplane-backup-'));
const children: ChildProcess[] = [];

/** `siteplane serve` on `dataDir` (its secret.key generated there on first start). */
async function serve(dataDir: string) {
  const started = await serveWith({ SITEPLANE_DATA_DIR: dataDir });
  children.push(started.child);
  return started;
}

function integrity(file: string): string {
  const db = new SQLite(file, { readonly: true });
  try {
    return (db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).join();
  } finally {
    db.close();
  }
}

afterAll(async () => {
  for (const child of children) await stop(child);
  rmSync(work, { recursive: true, force: true });
});

describe('siteplane backup and restore (SQLite; a live service taking creates)', { timeout: 180_000 }, () => {
  const live = join(work, 'live');
  const backupFile = join(work, 'nightly.db');
  let service: { child: ChildProcess; base: string };
  let token: string;
  let sshServer: string;
  let stream: ReturnType<typeof createStream>;
  let ackedBeforeBackup: string[] = [];
  let backupRun: Run;

  beforeAll(async () => {
    service = await serve(live);
    const created = await siteplane(['token', 'create', '--name', 'ops'], { SITEPLANE_DATA_DIR: live });
    expect(created.code, created.stderr).toBe(0);
    token = created.stdout.trim();
    const call = api(service.base, token);
    const ids = await dryRunServer(call);
    // An SSH server: Siteplane generates its key pair and seals the private key with secret.key.
    const ssh = await call('POST', '/api/v1/servers', { name: 'ssh-1', ip: '10.1.2.3', connection: 'ssh' });
    expect(ssh.status).toBe(201);
    sshServer = String(ssh.body.uuid);

    // A reader that holds its snapshot (as a long report or a `sqlite3` shell would): no checkpoint
    // can move later commits into the database file, so every site below lives only in the WAL —
    // a backup that copied the file alone would have none of them.
    const reader = new SQLite(join(live, 'siteplane.db'), { readonly: true });
    reader.exec('BEGIN');
    reader.prepare('SELECT count(*) FROM sites').get();

    stream = createStream(call, ids);
    await stream.until(40);
    // Every create whose 202 came back before the backup command started.
    ackedBeforeBackup = [...stream.acknowledged];
    backupRun = await siteplane(['backup', backupFile], { SITEPLANE_DATA_DIR: live });
    const ackedWhenBackupEnded = stream.acknowledged.length;
    reader.exec('COMMIT');
    reader.close();
    await stream.until(ackedWhenBackupEnded + 20);
    await stream.stop();
    // The stream went on through the whole backup: more creates were acknowledged while it ran.
    expect(ackedWhenBackupEnded).toBeGreaterThan(ackedBeforeBackup.length);
  });

  it('backs up while creates go on; none fails; the output names the file, size, schema, sites and the key file', () => {
    expect(backupRun.code, backupRun.stderr).toBe(0);
    expect(stream.failures).toEqual([]);
    expect(backupRun.stdout).toContain(`to:     ${backupFile}`);
    expect(backupRun.stdout).toMatch(/size: +\d+ bytes/);
    expect(backupRun.stdout).toContain(`schema: ${Object.keys(migrations).at(-1)}`);
    const sites = Number(/sites: +(\d+)/.exec(backupRun.stdout)?.[1]);
    expect(sites).toBeGreaterThanOrEqual(ackedBeforeBackup.length);
    expect(backupRun.stdout).toContain(`NOT in this backup. Keep ${join(live, 'secret.key')}`);
    // The key's value is never printed.
    expect(backupRun.stdout).not.toContain(readFileSync(join(live, 'secret.key'), 'utf8').trim());
    expect(integrity(backupFile)).toBe('ok');
    expect(statSync(backupFile).mode & 0o777).toBe(0o600);
    // One self-contained file: no WAL beside it, none needed.
    expect(readdirSync(work).filter((f) => f.startsWith('nightly.db'))).toEqual(['nightly.db']);
  });

  it('refuses to overwrite a backup without --force, and replaces it with --force', async () => {
    const before = readFileSync(backupFile);
    const again = await siteplane(['backup', backupFile], { SITEPLANE_DATA_DIR: live });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('exists');
    expect(readFileSync(backupFile).equals(before)).toBe(true);
    const other = join(work, 'other.db');
    writeFileSync(other, 'not yet a backup');
    const forced = await siteplane(['backup', other, '--force'], { SITEPLANE_DATA_DIR: live });
    expect(forced.code, forced.stderr).toBe(0);
    expect(integrity(other)).toBe('ok');
  });

  it('refuses to restore over a database a running service holds, even with --force, and changes nothing', async () => {
    const plain = await siteplane(['restore', backupFile, '--data-dir', live], {});
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('already has a database');
    const forced = await siteplane(['restore', backupFile, '--data-dir', live, '--force'], {});
    expect(forced.code).toBe(1);
    expect(forced.stderr).toContain('in use');
    expect(readdirSync(live).filter((f) => f.includes('before-restore') || f.includes('restoring'))).toEqual([]);
    const call = api(service.base, token);
    expect((await call('GET', `/api/v1/sites/${stream.acknowledged.at(-1)}`)).status).toBe(200);
  });

  it('restores into a new data directory: every site acknowledged before the backup is there, the key opens its secrets', async () => {
    await stop(service.child);
    const restored = join(work, 'restored');
    const keyFile = join(live, 'secret.key');
    const restoredKey = join(restored, 'secret.key');
    rmSync(restored, { recursive: true, force: true });
    mkdirSync(restored);
    copyFileSync(keyFile, restoredKey);
    const run = await siteplane(['restore', backupFile], { SITEPLANE_DATA_DIR: restored });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`The secret key in ${restoredKey} opens the sealed secrets`);
    expect(run.stdout).toContain('servers.private_key_enc');

    const file = join(restored, 'siteplane.db');
    expect(integrity(file)).toBe('ok');
    const db = new SQLite(file, { readonly: true });
    const row = db.prepare('SELECT private_key_enc FROM servers WHERE uuid = ?').get(sshServer) as { private_key_enc: string };
    db.close();
    const box = new SecretBox(Buffer.from(readFileSync(restoredKey, 'utf8').trim(), 'base64'));
    expect(box.open(row.private_key_enc)).toContain('PRIVATE KEY');

    const again = await serve(restored);
    const call = api(again.base, token);
    const missing: string[] = [];
    for (const uuid of ackedBeforeBackup) {
      if ((await call('GET', `/api/v1/sites/${uuid}`)).status !== 200) missing.push(uuid);
    }
    expect(missing).toEqual([]);
    expect(ackedBeforeBackup.length).toBeGreaterThanOrEqual(40);
    await stop(again.child);

    // --force keeps the database it replaces.
    const forced = await siteplane(['restore', backupFile, '--data-dir', restored, '--force'], {});
    expect(forced.code, forced.stderr).toBe(0);
    const kept = readdirSync(restored).filter((f) => f.startsWith('siteplane.db.before-restore-'));
    expect(kept).toHaveLength(1);
    expect(forced.stdout).toContain(`kept as ${join(restored, kept[0] as string)}`);
  });

  it('warns loudly (exit 2) when the data directory holds another secret.key', async () => {
    const elsewhere = join(work, 'wrong-key');
    mkdirSync(elsewhere);
    writeFileSync(join(elsewhere, 'secret.key'), `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    const run = await siteplane(['restore', backupFile, '--data-dir', elsewhere], {});
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('WARNING: the secret key');
    expect(run.stderr).toContain('does NOT open');
  });

  it('without a key in the data directory, reminds to put back the secret.key', async () => {
    const bare = join(work, 'no-key');
    const run = await siteplane(['restore', backupFile, '--data-dir', bare], {});
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`put the secret.key kept with this backup at ${join(bare, 'secret.key')}`);
    expect(existsSync(join(bare, 'secret.key'))).toBe(false);
  });
});

describe('siteplane restore: what it checks in the file', { timeout: 120_000 }, () => {
  it('refuses a file that is not a Siteplane database, leaving the data directory without one', async () => {
    const junk = join(work, 'junk.db');
    writeFileSync(junk, 'SQLite format 3? no.');
    const target = join(work, 'junk-target');
    const run = await siteplane(['restore', junk, '--data-dir', target], {});
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`${junk} is not a SQLite database`);
    expect(existsSync(join(target, 'siteplane.db'))).toBe(false);

    const foreign = join(work, 'foreign.db');
    const db = new SQLite(foreign);
    db.exec('CREATE TABLE notes (x TEXT)');
    db.close();
    const other = await siteplane(['restore', foreign, '--data-dir', target], {});
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("not Siteplane's");
  });

  it('migrates an older backup forward, and refuses one from a newer Siteplane', async () => {
    const names = Object.keys(migrations);
    const previous = names.at(-2) as string;
    const old = join(work, 'old.db');
    const kysely = new Kysely<unknown>({ dialect: new SqliteDialect({ database: new SQLite(old) }) });
    const migrated = await new Migrator({ db: kysely, provider: { getMigrations: async () => migrations } }).migrateTo(previous);
    expect(migrated.error).toBeUndefined();
    await kysely.destroy();
    const run = await siteplane(['restore', old, '--data-dir', join(work, 'from-old')], {});
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`schema: ${previous} → ${names.at(-1)} (migrated)`);

    const future = join(work, 'future.db');
    copyFileSync(old, future);
    const db = new SQLite(future);
    db.prepare('INSERT INTO kysely_migration (name, timestamp) VALUES (?, ?)').run(
      '999_from_the_future',
      new Date().toISOString(),
    );
    db.close();
    const refused = await siteplane(['restore', future, '--data-dir', join(work, 'from-future')], {});
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('newer Siteplane (migrations 999_from_the_future unknown here)');
    expect(existsSync(join(work, 'from-future', 'siteplane.db'))).toBe(false);
  });
});

describe('siteplane backup and restore on PostgreSQL', { timeout: 60_000 }, () => {
  it('answer with the README procedure (pg_dump -Fc) and a non-zero exit', async () => {
    const env = { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres', SITEPLANE_DATA_DIR: join(work, 'pg') };
    for (const args of [
      ['backup', join(work, 'pg.db')],
      ['restore', join(work, 'nightly.db')],
    ]) {
      const run = await siteplane(args, env);
      expect(run.code).toBe(1);
      expect(run.stderr).toContain('DATABASE_URL is set');
      expect(run.stderr).toContain('pg_dump -Fc');
      expect(run.stderr).toContain('"Backups"');
    }
    expect(existsSync(join(work, 'pg.db'))).toBe(false);
    expect(existsSync(join(work, 'pg'))).toBe(false);
  });
});
