// npm run bench:cluster: creates per second on PostgreSQL through one API process, then through
// two (SITEPLANE_WORKER=off, one fresh database), driven over loopback by autocannon with the same
// total connections; prints both figures and their ratio (issue 13's target: two >= 1.6x one).
// BENCH_WORKERS=2 also runs two worker processes during both runs (they install the dry-run sites:
// realistic, but they take CPU from the APIs on a small machine). BENCH_MIX=1 makes every fourth
// request a list by server. BENCH_API_CPU=<cores> holds each API process to that much of one core
// (bench/cpu-cap.ts, root): on a machine where the database, the APIs and the load generator share
// too few cores, only then is one API process what runs out, and the ratio measures what a second
// one adds rather than how the machine's cores are shared. Loopback only; every process it starts is
// stopped by PID at the end.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import pg from 'pg';
import { capCpu, cpuCapProblem } from './cpu-cap.js';
import { builtServiceCommand, startFlags } from './service-command.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const WARMUP = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
const CONNECTIONS = 50;
const SERVERS = Number(process.env.BENCH_SERVERS ?? 50);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 0);
const MIX = process.env.BENCH_MIX === '1';
const API_CPU = process.env.BENCH_API_CPU ? Number(process.env.BENCH_API_CPU) : null;
if (API_CPU !== null && !(API_CPU > 0))
  throw new Error(`BENCH_API_CPU: a number of cores above 0, not ${process.env.BENCH_API_CPU}`);
const capProblem = API_CPU === null ? null : cpuCapProblem();
if (capProblem) throw new Error(`BENCH_API_CPU: ${capProblem}`);
const PORT = Number(process.env.BENCH_PORT ?? 18_580);
const PG_ADMIN = process.env.BENCH_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `sp_bench_${randomBytes(6).toString('hex')}`;
const databaseUrl = PG_ADMIN.replace(/\/[^/]*$/, `/${dbName}`);
const dirs: string[] = [];
const children: ChildProcess[] = [];
const caps: { release(): void }[] = [];
// Each process as `npm start` runs it (bench/run.ts does the same), so one and two processes
// compare to the single-process figures of `npm run bench`.
const CLI = [...startFlags().split(' ').filter(Boolean), ...builtServiceCommand()];

function env(port: number, worker: boolean): NodeJS.ProcessEnv {
  const dir = mkdtempSync(join(tmpdir(), 'siteplane-bench-cluster-'));
  dirs.push(dir);
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    SITEPLANE_DATA_DIR: dir,
    SITEPLANE_SECRET_KEY: secretKey,
    HOST: '127.0.0.1',
    PORT: String(port),
    LOG_LEVEL: 'warn',
    SITEPLANE_WORKER: worker ? 'on' : 'off',
    SITEPLANE_RATE_LIMIT: '0',
    SITEPLANE_RATE_LIMIT_ADDRESS: '0',
    SITEPLANE_QUOTA_SERVERS: '0',
    SITEPLANE_QUOTA_SITES: '0',
  };
}
const secretKey = randomBytes(32).toString('base64');

async function start(port: number, worker: boolean): Promise<string> {
  const child = spawn(process.execPath, [...CLI, 'serve'], { env: env(port, worker), stdio: ['ignore', 'ignore', 'inherit'] });
  children.push(child);
  if (API_CPU !== null && !worker && child.pid) caps.push(capCpu(child.pid, API_CPU));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i++) {
    try {
      if ((await fetch(`${base}/api/v1/health`)).status < 500) return base;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${base} did not come up`);
}

async function stopAll(list: ChildProcess[]): Promise<void> {
  for (const child of list) {
    if (!child.pid || child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((r) => child.once('exit', r));
    process.kill(child.pid, 'SIGTERM');
    await exited;
  }
}

async function api(base: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

let n = 0;
/** One autocannon run per base, together, the connections shared out; answers the summed req/s. */
async function createLoad(
  title: string,
  bases: string[],
  token: string,
  servers: { server: string; serverUser: string }[],
  seconds = DURATION,
) {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const results = await Promise.all(
    bases.map(
      (base) =>
        new Promise<autocannon.Result>((resolve, reject) => {
          autocannon(
            {
              url: `${base}/api/v1/sites`,
              connections: Math.floor(CONNECTIONS / bases.length),
              duration: seconds,
              headers,
              requests: [
                {
                  setupRequest: (req) => {
                    n++;
                    const ids = servers[n % servers.length];
                    if (MIX && n % 4 === 0) return { ...req, method: 'GET', path: `/api/v1/sites?server=${ids?.server}` };
                    const body = { ...ids, type: 'static-html', domain: `b${n}.cluster.example.com`, ssl: false, options: {} };
                    return { ...req, method: 'POST', path: '/api/v1/sites', body: JSON.stringify(body) };
                  },
                },
              ],
            },
            (err, result) => (err ? reject(err) : resolve(result)),
          );
        }),
    ),
  );
  const rps = results.reduce((sum, r) => sum + r.requests.average, 0);
  const bad = results.reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0);
  const p50 = Math.max(...results.map((r) => r.latency.p50));
  const p99 = Math.max(...results.map((r) => r.latency.p99));
  console.log(
    `${title.padEnd(34)} ${rps.toFixed(0).padStart(7)} req/s   p50 ${p50} ms   p99 ${p99} ms${bad ? `   (${bad} non-2xx/errors)` : ''}`,
  );
  return rps;
}

process.once('SIGTERM', () => {
  for (const child of children) if (child.pid && child.exitCode === null) process.kill(child.pid, 'SIGTERM');
  process.exit(143);
});

const admin = new pg.Client({ connectionString: PG_ADMIN });
await admin.connect();
await admin.query(`CREATE DATABASE ${dbName}`);
try {
  const first = await start(PORT, false);
  const token = execFileSync(process.execPath, [...CLI, 'token', 'create', '--name', 'bench'], {
    env: env(PORT + 9, false),
    encoding: 'utf8',
  }).trim();
  const servers: { server: string; serverUser: string }[] = [];
  for (let i = 0; i < SERVERS; i++) {
    const s = await api(first, token, 'POST', '/api/v1/servers', {
      name: `web-${i}`,
      ip: '127.0.0.1',
      connection: 'dry-run',
      facts: { php: ['8.2'] },
    });
    const u = await api(first, token, 'POST', `/api/v1/servers/${s.uuid}/users`, { username: 'deploy' });
    servers.push({ server: s.uuid as string, serverUser: u.uuid as string });
  }
  for (let i = 0; i < WORKERS; i++) await start(PORT + 2 + i, true);

  console.log(
    `Siteplane cluster bench — ${new Date().toISOString()} — ${cpus().length} × ${cpus()[0]?.model} — node ${process.version} — load average ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
  console.log(
    `PostgreSQL, ${SERVERS} dry-run servers, ${WORKERS} worker processes; ${CONNECTIONS} connections in all, ${DURATION} s each; ${MIX ? '3 creates : 1 list' : 'creates'}; ${API_CPU === null ? 'API processes not capped' : `each API process held to ${API_CPU} of a core`}`,
  );
  // One, two, one again: the database grows through the runs, so the ratio is taken against the
  // mean of the runs before and after the two-process one.
  // Each process warms up (JIT, pools, caches) before it is measured; the warm-up is not counted.
  // A capped process warms up on its share of a core: as long, in CPU, as an uncapped one.
  const warmup = Math.round(WARMUP / Math.min(1, API_CPU ?? 1));
  await createLoad('(warm-up, not counted)', [first], token, servers, warmup);
  const one = await createLoad('1 API process', [first], token, servers);
  const second = await start(PORT + 1, false);
  await createLoad('(warm-up, not counted)', [second], token, servers, warmup);
  const two = await createLoad('2 API processes', [first, second], token, servers);
  const again = await createLoad('1 API process, again', [first], token, servers);
  const capped =
    API_CPU === null
      ? 'API processes not capped: BENCH_API_CPU=0.3 holds each to 0.3 of a core'
      : `each API process held to ${API_CPU} of a core`;
  console.log(`ratio two/one: ${(two / ((one + again) / 2)).toFixed(2)}x (target >= 1.6x; ${capped})`);
} finally {
  await stopAll(children);
  for (const cap of caps) cap.release();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
  await admin.end();
}
