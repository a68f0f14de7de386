// npx tsx bench/job-cost.ts: CPU time per create and per create with its dry-run job, in process
// (no HTTP server, no load generator), measured with process.cpuUsage: this process's own CPU time,
// so the figure holds on a machine shared with other work (wall time does not). Also counts the SQL
// statements a create and its job run. BENCH_JOBS (default 2000) creates, 25 at a time, over 10
// dry-run servers of one team; first with the worker off (creates only), then on (creates and jobs).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pino from 'pino';
import { buildService } from '../packages/server/src/app/build-service.js';
import { loadConfig } from '../packages/server/src/app/config.js';
import { createToken } from '../packages/server/src/storage/tokens.js';

const JOBS = Number(process.env.BENCH_JOBS ?? 2000);
const BATCH = 25;

// Every statement better-sqlite3 runs, counted where Kysely's driver runs them (all or run).
let statements = 0;
// BENCH_STATEMENTS=1: also the statements of the worker-on run by total time (the cost of timing each
// is small); BENCH_STATEMENTS=off: those of the worker-off run (the creates alone).
const BY_STATEMENT = process.env.BENCH_STATEMENTS === '1' || process.env.BENCH_STATEMENTS === 'off';
const STATEMENTS_OF = process.env.BENCH_STATEMENTS === 'off' ? 'off' : 'on';
const byStatement = new Map<string, { n: number; ms: number }>();
const probe = new SQLite(':memory:');
const Statement = probe.prepare('SELECT 1').constructor.prototype as Record<'all' | 'run', (...args: unknown[]) => unknown>;
probe.close();
for (const method of ['all', 'run'] as const) {
  const original = Statement[method];
  Statement[method] = function (this: { source: string }, ...args: unknown[]) {
    statements++;
    if (!BY_STATEMENT) return original.apply(this, args);
    const started = performance.now();
    try {
      return original.apply(this, args);
    } finally {
      const seen = byStatement.get(this.source) ?? { n: 0, ms: 0 };
      seen.n++;
      seen.ms += performance.now() - started;
      byStatement.set(this.source, seen);
    }
  };
}

async function measure(worker: 'on' | 'off'): Promise<{ cpuUs: number; statements: number }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'siteplane-job-cost-'));
  const config = loadConfig({
    SITEPLANE_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    SITEPLANE_WORKER: worker,
    SITEPLANE_RATE_LIMIT: '0',
    SITEPLANE_RATE_LIMIT_ADDRESS: '0',
    SITEPLANE_QUOTA_SERVERS: '0',
    SITEPLANE_QUOTA_SITES: '0',
  });
  const service = await buildService(config, { logger: pino({ level: 'silent' }) });
  try {
    const { token } = await createToken(service.storage.db, { name: 'bench', scope: 'write' });
    const headers = { authorization: `Bearer ${token}` };
    const call = async (method: 'POST', url: string, payload: unknown) => {
      const res = await service.app.inject({ method, url, headers, payload: payload as Record<string, unknown> });
      if (res.statusCode >= 300) throw new Error(`${url}: ${res.statusCode} ${res.body}`);
      return res.json() as { uuid: string };
    };
    const servers: { server: string; serverUser: string }[] = [];
    for (let i = 0; i < 10; i++) {
      const s = await call('POST', '/api/v1/servers', { name: `web-${i}`, ip: '127.0.0.1', connection: 'dry-run', facts: {} });
      const u = await call('POST', `/api/v1/servers/${s.uuid}/users`, { username: 'deploy' });
      servers.push({ server: s.uuid, serverUser: u.uuid });
    }
    const counted = statements;
    const start = process.cpuUsage();
    for (let from = 0; from < JOBS; from += BATCH) {
      await Promise.all(
        Array.from({ length: Math.min(BATCH, JOBS - from) }, (_, i) =>
          call('POST', '/api/v1/sites', {
            ...servers[(from + i) % servers.length],
            type: 'static-html',
            domain: `c${from + i}.bench.example.com`,
            ssl: false,
            options: {},
          }),
        ),
      );
    }
    if (worker === 'on')
      for (;;) {
        const left = await service.storage.db
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('status', 'in', ['queued', 'running'])
          .executeTakeFirstOrThrow();
        if (Number(left.n) === 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
    const used = process.cpuUsage(start);
    const failed = await service.storage.db
      .selectFrom('sites')
      .select('status')
      .where('status', '!=', worker === 'on' ? 'installed' : 'pending')
      .execute();
    if (failed.length) throw new Error(`${failed.length} sites not as expected: ${failed[0]?.status}`);
    return { cpuUs: used.user + used.system, statements: statements - counted };
  } finally {
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const off = await measure('off');
const offStatements = new Map(byStatement);
byStatement.clear();
const on = await measure('on');
const listed = STATEMENTS_OF === 'off' ? offStatements : byStatement;
const per = (n: number) => (n / JOBS).toFixed(0);
console.log(
  `${JOBS} creates: worker off ${per(off.cpuUs)} µs CPU and ${(off.statements / JOBS).toFixed(1)} statements per create`,
);
console.log(
  `${JOBS} creates: worker on  ${per(on.cpuUs)} µs CPU and ${(on.statements / JOBS).toFixed(1)} statements per create and its job`,
);
console.log(
  `the job alone: ${per(on.cpuUs - off.cpuUs)} µs CPU, ${((on.statements - off.statements) / JOBS).toFixed(1)} statements`,
);
if (BY_STATEMENT)
  for (const [source, { n, ms }] of [...listed].sort((a, b) => b[1].ms - a[1].ms).slice(0, 40))
    console.log(`${ms.toFixed(0).padStart(6)} ms ${String(n).padStart(7)}× ${source.replace(/\s+/g, ' ').slice(0, 160)}`);
