import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, sqliteFile } from '../../../src/app/config.js';
import { openStorage } from '../../../src/storage/database.js';
import { createToken } from '../../../src/storage/tokens.js';
import { ExecutorProbe, Harness, httpApi, removeSystemUser, runId, SitesClient, unauthorizeKey } from './support/harness.js';
import { curlUntil, daemonsBefore, pathKind, pm2Kill, pm2List, run, stopDaemonsStartedSince } from './support/host.js';
import { killableServeEnv, serve, waitForStep } from './support/serve.js';

/**
 * Issue 3 item 9: "a job killed mid-way resumes after restart and finishes without duplicates".
 * The worker's lease is short; a second service on the same data directory takes the job over
 * once the first one's lease ran out, runs the recipe again (every step checks before it
 * changes) and finishes. Twice: a service whose job hangs and whose database goes away (in
 * process), and `siteplane serve` killed with SIGKILL by PID.
 */
const id = runId();
const user = `spr${id}`;

interface Db {
  db: Awaited<ReturnType<typeof openStorage>>['db'];
  close(): Promise<void>;
}

async function openDb(dataDir: string): Promise<Db> {
  const storage = await openStorage({ databaseUrl: null, sqliteFile: sqliteFile(loadConfig({ SITEPLANE_DATA_DIR: dataDir })) });
  return { db: storage.db, close: () => storage.close() };
}

/** What the service's own tables say about one site's work: operations, steps, job attempts, ledger. */
async function bookkeeping(db: Db['db'], siteUuid: string) {
  const operations = await db.selectFrom('operations').selectAll().where('site_uuid', '=', siteUuid).execute();
  const jobs = await db.selectFrom('jobs').selectAll().where('site_uuid', '=', siteUuid).execute();
  const steps = await db
    .selectFrom('operation_steps')
    .selectAll()
    .where(
      'operation_uuid',
      'in',
      operations.map((o) => o.uuid),
    )
    .orderBy('idx')
    .execute();
  const ledger = await db.selectFrom('site_resources').selectAll().where('site_uuid', '=', siteUuid).execute();
  return { operations, jobs, steps, ledger };
}

describe('a create killed mid-way resumes after a restart, without duplicates (issue 3 item 9)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch((e) => console.error(e));
    await removeSystemUser(user, id);
  });

  it('in process: the first service hangs after `pm2 start` and loses its database; a second one finishes', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'siteplane-resume-'));
    const env = { SITEPLANE_DATA_DIR: dataDir, SITEPLANE_SECRET_KEY: randomBytes(32).toString('base64') };
    const daemons = await daemonsBefore();
    const probeA = new ExecutorProbe();
    let reached!: () => void;
    const atPm2Start = new Promise<void>((resolve) => {
      reached = resolve;
    });
    // Right after PM2 started the process, before the step could record success: the worst moment.
    probeA.hook = async (argv, phase) => {
      if (phase === 'after' && argv[0] === 'pm2' && argv[1] === 'start') {
        reached();
        await new Promise(() => undefined);
      }
    };
    const a = await Harness.start({ username: user, leaseMs: 1_500, probe: probeA, env });
    cleanups.push(async () => {
      for (const exec of probeA.executors) await exec.close();
      await a.sshPool.closeAll();
      rmSync(dataDir, { recursive: true, force: true });
      await pm2Kill(user);
      await stopDaemonsStartedSince(daemons);
    });
    await a.registerServer();
    cleanups.push(async () => unauthorizeKey(a.publicKey));
    const domain = `resume-${id}.siteplane.test`;
    const site = await a.createSite('nodejs-ssr', domain);
    await atPm2Start;

    // The crash: no more polling (stop() returns at once; what it awaits — the hung job — never
    // ends), no more HTTP, no more heartbeats (its database is gone); the job stays `running`.
    void a.service.worker?.stop();
    await a.service.app.close();
    await a.service.storage.close();
    expect((await pm2List(user)).get(domain)).toBe('online');

    const probeB = new ExecutorProbe();
    const b = await Harness.start({ username: user, probe: probeB, env });
    cleanups.push(() => b.stop());
    Object.assign(b, { server: a.server, serverUser: a.serverUser });
    const done = await b.waitInstalled(site, 60_000);
    expect(done.status).toBe('installed');

    const book = await bookkeeping(b.service.storage.db, site.uuid);
    expect(book.operations).toHaveLength(1);
    expect(book.jobs).toHaveLength(1);
    expect(book.jobs[0]).toMatchObject({ status: 'done', attempts: 2 });
    const names = book.steps.map((s) => s.name);
    expect(names).toEqual([
      'ensure system user',
      'ensure nginx',
      'ensure Node.js',
      'ensure PM2',
      'ensure site directory',
      'ensure PM2 process',
      'ensure nginx vhost',
    ]);
    expect(book.steps.every((s) => s.status === 'succeeded')).toBe(true);
    const keys = book.ledger.map((r) => `${r.kind} ${r.ref}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual(
      expect.arrayContaining([`pm2_process ${domain}`, `nginx_vhost /etc/nginx/sites-available/${domain}.conf`]),
    );
    const op = await b.operation(site.operation.uuid);
    expect(op.logs.map((l) => l.line)).toContain('resuming (attempt 2)');

    // On the server: `pm2 start` ran once (by the first service), one process of that name, serving.
    const starts = [...probeA.runs, ...probeB.runs].filter((r) => r.argv[0] === 'pm2' && r.argv[1] === 'start');
    expect(starts).toHaveLength(1);
    const pm2 = await run('runuser', [
      '-u',
      user,
      '--',
      'env',
      `HOME=/home/${user}`,
      `PM2_HOME=/home/${user}/.pm2`,
      'pm2',
      'jlist',
    ]);
    const list = JSON.parse(pm2.stdout.split('\n').find((l) => l.startsWith('[{')) ?? '[]') as { name: string }[];
    expect(list.filter((p) => p.name === domain)).toHaveLength(1);
    expect((await curlUntil(domain, '/', (r) => r.body.includes('is ready'))).body).toContain(`${domain} is ready`);

    const del = await b.deleteSite(site.uuid, true);
    await b.waitGone(site, del.operation.uuid);
    expect(pathKind(`/home/${user}/${domain}`)).toBeNull();
    expect((await pm2List(user)).has(domain)).toBe(false);
  }, 120_000);

  it('siteplane serve killed with SIGKILL during a WordPress create; a restarted serve finishes it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'siteplane-kill9-'));
    const env = killableServeEnv(dataDir);
    const daemons = await daemonsBefore();
    const store = await openDb(dataDir);
    const token = (await createToken(store.db, { name: 'kill9', scope: 'write' })).token;
    await store.close();
    const children: ChildProcess[] = [];
    let live: SitesClient | null = null;
    cleanups.push(async () => {
      // A failed run's site is deleted through the service that still runs, then that service stops.
      await live?.sweep().catch(() => undefined);
      for (const child of children) {
        if (child.exitCode !== null || child.signalCode !== null) continue;
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
      }
      rmSync(dataDir, { recursive: true, force: true });
      await stopDaemonsStartedSince(daemons);
    });

    const first = await serve(env, children);
    const api = new SitesClient(httpApi(first.base, token), user);
    live = api;
    await api.registerServer();
    cleanups.push(async () => unauthorizeKey(api.publicKey));
    const domain = `kill9-${id}.siteplane.test`;
    const site = await api.createSite('wordpress', domain, {
      wpAdminSetup: { title: `Killed ${id}`, adminUser: 'admin', adminPassword: 'wp-Admin-789', adminEmail: 'a@example.com' },
    });

    // Kill while WordPress's files are being copied: the copy runs detached on the server and
    // outlives the control plane, so the resumed job meets a half-copied (or finished) tree.
    const steps = await waitForStep(api, site.operation.uuid, 'ensure WordPress files');
    await new Promise((r) => setTimeout(r, 150));
    live = null;
    process.kill(first.child.pid!, 'SIGKILL');
    await new Promise((resolve) => first.child.once('exit', resolve));
    expect(first.child.signalCode).toBe('SIGKILL');
    expect(steps.filter((s) => s.status === 'succeeded').length).toBeGreaterThanOrEqual(5);

    const second = await serve(env, children);
    const again = new SitesClient(httpApi(second.base, token), user);
    Object.assign(again, { server: api.server, serverUser: api.serverUser });
    live = again;
    const done = await again.waitInstalled(site, 90_000);
    expect(done.status).toBe('installed');

    const check = await openDb(dataDir);
    const book = await bookkeeping(check.db, site.uuid);
    await check.close();
    expect(book.operations).toHaveLength(1);
    expect(book.jobs[0]).toMatchObject({ status: 'done', attempts: 2 });
    const names = book.steps.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
    expect(book.steps.every((s) => s.status === 'succeeded')).toBe(true);
    const keys = book.ledger.map((r) => `${r.kind} ${r.ref}`);
    expect(new Set(keys).size).toBe(keys.length);

    // The site works: WordPress's own front page, with this site's wp-config.php (not Debian's).
    const page = await curlUntil(domain, '/', (r) => r.body.includes(`Killed ${id}`));
    expect(page.status).toBe(200);
    expect(page.body).toContain(`Killed ${id}`);
    const config = await run('cat', [`/home/${user}/${domain}/current/wp-config.php`]);
    expect(config.stdout).toContain(`define('DB_NAME', '${done.database.name}')`);

    const del = await again.deleteSite(site.uuid, true);
    await again.waitGone(site, del.operation.uuid);
    expect(pathKind(`/home/${user}/${domain}`)).toBeNull();
    live = null;
    second.child.kill('SIGTERM');
    await new Promise((resolve) => second.child.once('exit', resolve));
    expect(second.child.exitCode).toBe(0);
  }, 180_000);
});
