import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../src/storage/migrations/index.js';
import { api, dryRunServer, serve, siteplane, stop } from '../support/cli-process.js';
import { TEST_DB } from '../support/test-service.js';

/**
 * Issue 13 item 1: two API processes (SITEPLANE_WORKER=off) and two worker processes, each a real
 * `siteplane serve`, started together on one fresh PostgreSQL database. Creates and deletes are
 * spread over both APIs against dry-run servers, and one worker is killed with SIGKILL while it
 * holds jobs. Then: every acknowledged site ends installed or deleted, by exactly one successful
 * operation; no operation ran in two processes at once (the journal names the process of each
 * run); each list read through the other API right after a 202 already shows the write.
 */
const PG_ADMIN = process.env.SITEPLANE_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SITES = 48;
const CLIENTS = 6;
const LEASE_MS = 4_000;

describe.skipIf(TEST_DB !== 'postgres')('two API and two worker processes on one PostgreSQL', () => {
  const dbName = `sp_cluster_${randomBytes(6).toString('hex')}`;
  const databaseUrl = PG_ADMIN.replace(/\/[^/]*$/, `/${dbName}`);
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  let db: pg.Client;
  let apis: { base: string }[] = [];
  let workers: { child: ChildProcess; base: string }[] = [];
  let token = '';

  const env = (worker: boolean): Record<string, string> => {
    const dir = mkdtempSync(join(tmpdir(), 'siteplane-cluster-'));
    dirs.push(dir);
    return {
      DATABASE_URL: databaseUrl,
      SITEPLANE_DATA_DIR: dir,
      SITEPLANE_SECRET_KEY: secretKey,
      SITEPLANE_WORKER: worker ? 'on' : 'off',
      SITEPLANE_JOB_LEASE_MS: String(LEASE_MS),
      SITEPLANE_QUOTA_SITES: '0',
    };
  };
  const secretKey = randomBytes(32).toString('base64');

  beforeAll(async () => {
    const admin = new pg.Client({ connectionString: PG_ADMIN });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${dbName}`);
    await admin.end();
    // All four at once on the empty database: each runs the migrations at start.
    // Four tsx processes compiling at once on a small, busy machine take a while to listen.
    const up = (worker: boolean) => serve(env(worker), 200_000);
    const started = await Promise.allSettled([up(false), up(false), up(true), up(true)]);
    for (const s of started) if (s.status === 'fulfilled') children.push(s.value.child);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
    const [a1, a2, w1, w2] = started.map((s) => (s as PromiseFulfilledResult<{ child: ChildProcess; base: string }>).value);
    apis = [a1, a2] as { base: string }[];
    workers = [w1, w2] as { child: ChildProcess; base: string }[];
    const created = await siteplane(['token', 'create', '--name', 'cluster'], env(false));
    if (created.code !== 0) throw new Error(created.stderr);
    token = created.stdout.trim().split('\n').at(-1)?.trim() ?? '';
    db = new pg.Client({ connectionString: databaseUrl });
    await db.connect();
  }, 300_000);

  afterAll(async () => {
    await db?.end().catch(() => undefined);
    for (const child of children) await stop(child);
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    const admin = new pg.Client({ connectionString: PG_ADMIN });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
  });

  it('migrated the empty database once while all four started together', async () => {
    const { rows } = await db.query<{ name: string }>('SELECT name FROM kysely_migration ORDER BY name');
    expect(rows.map((r) => r.name)).toEqual(Object.keys(migrations).sort());
    const triggers = await db.query(`SELECT tgname FROM pg_trigger WHERE tgname LIKE '%_site_list_changed'`);
    expect(triggers.rows).toHaveLength(3);
  });

  it('creates and deletes over both APIs, a worker killed mid-job: every site ends once, nothing lost, lists consistent', async () => {
    const calls = apis.map((a) => api(a.base, token));
    const [call1, call2] = calls as [ReturnType<typeof api>, ReturnType<typeof api>];
    const servers = [await dryRunServer(call1), await dryRunServer(call2)];
    const acknowledged: { uuid: string; server: string; via: number }[] = [];
    const deleted = new Set<string>();
    const problems: string[] = [];
    // Read-after-write across processes: the other API's list, read right after the 202.
    const listed = async (via: number, server: string) => {
      const res = await (calls[via] as ReturnType<typeof api>)('GET', `/api/v1/sites?server=${server}&limit=500`);
      return new Map(
        (res.body.data as { uuid: string; status: string; operation: { uuid: string } | null }[]).map((s) => [
          s.uuid,
          { status: s.status, operation: s.operation?.uuid },
        ]),
      );
    };
    let next = 0;
    const client = async () => {
      for (;;) {
        const i = next++;
        if (i >= SITES) return;
        const via = i % 2;
        const ids = servers[Math.floor(i / 2) % 2] as { server: string; serverUser: string };
        const res = await (calls[via] as ReturnType<typeof api>)('POST', '/api/v1/sites', {
          ...ids,
          type: 'static-html',
          domain: `c${i}.cluster.example.com`,
          ssl: false,
          options: {},
        });
        if (res.status !== 202) {
          problems.push(`create ${i}: ${res.status} ${JSON.stringify(res.body)}`);
          continue;
        }
        const uuid = String(res.body.uuid);
        acknowledged.push({ uuid, server: ids.server, via });
        if (!(await listed(1 - via, ids.server)).has(uuid))
          problems.push(`create ${uuid} via API ${via + 1} not listed by the other`);
        // Every third site is deleted again, through the other API, while its create may still run.
        if (i % 3 === 0) {
          const del = await (calls[1 - via] as ReturnType<typeof api>)('DELETE', `/api/v1/sites/${uuid}`);
          if (del.status !== 202) problems.push(`delete ${uuid}: ${del.status} ${JSON.stringify(del.body)}`);
          else {
            deleted.add(uuid);
            // Its latest operation is the delete (its status may move on: the create job, still
            // running, sets the site installing and installed before the delete job runs).
            const operation = String((del.body.operation as { uuid: string }).uuid);
            const site = (await listed(via, ids.server)).get(uuid);
            if (site && site.operation !== operation)
              problems.push(`delete ${uuid} via API ${2 - via}: the other lists operation ${site.operation}, not ${operation}`);
          }
        }
      }
    };
    const load = Promise.all(Array.from({ length: CLIENTS }, client));

    // SIGKILL the first worker as soon as it holds a running job (its PID is in its worker id).
    const victim = workers[0] as { child: ChildProcess };
    const victimPid = String(victim.child.pid);
    let heldAtKill: string[] = [];
    for (let i = 0; i < 600 && heldAtKill.length === 0; i++) {
      // A job it runs a step of, with its run already in the journal.
      const { rows } = await db.query<{ operation_uuid: string }>(
        `SELECT j.operation_uuid FROM jobs j WHERE j.status = 'running' AND j.locked_by LIKE $1
           AND EXISTS (SELECT 1 FROM operation_steps s WHERE s.operation_uuid = j.operation_uuid AND s.status = 'running')
           AND EXISTS (SELECT 1 FROM operation_logs l WHERE l.operation_uuid = j.operation_uuid AND l.line LIKE $2)`,
        [`worker-%-${victimPid}-%`, `run by worker-%-${victimPid}-%`],
      );
      if (rows.length > 0) {
        const exited = new Promise((resolve) => victim.child.once('exit', resolve));
        victim.child.kill('SIGKILL');
        await exited;
        // What it still held once it was dead: those jobs were cut off in the middle.
        heldAtKill = (
          await db.query<{ operation_uuid: string }>(
            `SELECT operation_uuid FROM jobs WHERE status = 'running' AND locked_by LIKE $1`,
            [`worker-%-${victimPid}-%`],
          )
        ).rows.map((r) => r.operation_uuid);
        break;
      }
      await new Promise((r) => setTimeout(r, 25));
    }
    const killedAt = new Date().toISOString();
    await load;
    expect(problems).toEqual([]);
    expect(acknowledged).toHaveLength(SITES);
    expect(heldAtKill.length).toBeGreaterThan(0);

    // Every site settles: kept ones installed, deleted ones deleted (bounded: lease, polls, load).
    const settled = async () => {
      const { rows } = await db.query<{ uuid: string; status: string }>('SELECT uuid, status FROM sites');
      return new Map(rows.map((r) => [r.uuid, r.status]));
    };
    let states = await settled();
    for (let i = 0; i < 240; i++) {
      if (acknowledged.every((s) => states.get(s.uuid) === (deleted.has(s.uuid) ? 'deleted' : 'installed'))) break;
      await new Promise((r) => setTimeout(r, 500));
      states = await settled();
    }
    // Nothing acknowledged lost, nothing more made; each in the state its requests asked for.
    expect([...states.keys()].sort()).toEqual(acknowledged.map((s) => s.uuid).sort());
    for (const s of acknowledged)
      expect(`${s.uuid} ${states.get(s.uuid)}`).toBe(`${s.uuid} ${deleted.has(s.uuid) ? 'deleted' : 'installed'}`);

    // Exactly once: one successful create per site, one successful delete per deleted site, no other outcome.
    const { rows: ops } = await db.query<{ uuid: string; site_uuid: string; kind: string; status: string }>(
      'SELECT uuid, site_uuid, kind, status FROM operations',
    );
    for (const s of acknowledged) {
      const mine = ops.filter((o) => o.site_uuid === s.uuid).map((o) => `${o.kind} ${o.status}`);
      expect(mine.sort()).toEqual(deleted.has(s.uuid) ? ['create succeeded', 'delete succeeded'] : ['create succeeded']);
    }
    const { rows: jobs } = await db.query<{ status: string }>(`SELECT status FROM jobs WHERE status <> 'done'`);
    expect(jobs).toEqual([]);

    // One process at a time per operation (the journal names the worker of each run): an operation
    // run twice was the killed worker's, and its second run began after that worker was dead.
    const { rows: runs } = await db.query<{ operation_uuid: string; seq: number; at: string; line: string }>(
      `SELECT operation_uuid, seq, at, line FROM operation_logs WHERE line LIKE 'run by %' ORDER BY operation_uuid, seq`,
    );
    const byOperation = new Map<string, { at: string; pid: string }[]>();
    for (const r of runs) {
      const pid = /^run by worker-.*-(\d+)-[0-9a-f]{8} \(attempt \d+\)$/.exec(r.line)?.[1] ?? `unparsed: ${r.line}`;
      byOperation.set(r.operation_uuid, [...(byOperation.get(r.operation_uuid) ?? []), { at: r.at, pid }]);
    }
    expect(byOperation.size).toBe(ops.length);
    const workerPids = workers.map((w) => String(w.child.pid));
    for (const [operation, list] of byOperation) {
      for (const run of list) expect(workerPids).toContain(run.pid);
      const earlier = list.slice(0, -1);
      for (const run of earlier) expect(`${operation} run by ${run.pid}`).toBe(`${operation} run by ${victimPid}`);
      if (earlier.length > 0)
        expect(`${operation} rerun at ${list.at(-1)?.at}`).toBe(`${operation} rerun at ${maxAt(list.at(-1)?.at, killedAt)}`);
    }
    // The jobs cut off by the kill were finished by the other worker, after the kill; at least one
    // of them had started a step in the killed process (the kill came in the middle of its work).
    for (const operation of heldAtKill) expect(byOperation.get(operation)?.at(-1)?.pid).toBe(String(workers[1]?.child.pid));
    expect(heldAtKill.filter((operation) => (byOperation.get(operation)?.length ?? 0) >= 2).length).toBeGreaterThan(0);
    // Every step of every operation finished once, in its own row.
    const { rows: steps } = await db.query<{ status: string; n: string }>(
      'SELECT status, count(*) AS n FROM operation_steps GROUP BY status',
    );
    expect(steps.map((s) => s.status)).toEqual(['succeeded']);

    // Both APIs list the same, current state.
    for (const server of servers) {
      const [one, two] = [await listed(0, server.server), await listed(1, server.server)];
      expect([...one]).toEqual([...two]);
      expect([...one.values()].every((site) => site.status === 'installed')).toBe(true);
    }
  }, 240_000);
});

/** The later of two ISO times (a rerun must begin after the kill). */
function maxAt(a: string | undefined, b: string): string {
  return a !== undefined && a > b ? a : b;
}
