// npm run bench: Siteplane on SQLite over 50 dry-run servers with its worker on (jobs run in the API's
// process), driven over loopback by autocannon, next to a raw node:http server answering the same list
// bytes. With 10^2 sites in the database: list by server, get one site; then creates while the worker
// runs their dry-run jobs; then the database filled up to BENCH_SITES (default 10^5: finished sites
// seeded in bulk, bench/seed-sites.ts) and the reads again.
// Prints req/s, p50/p99 latency, the ratios to raw, the list's p50 at 10^5 against 10^2, and the API
// process's resident memory at the end. Loopback only; every process it starts is stopped by PID.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import SQLite from 'better-sqlite3';
import { seedFinishedSites } from './seed-sites.js';
import { builtServiceCommand, startFlags } from './service-command.js';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
// Raw, list and get alternate this many times (each DURATION / ROUNDS s): on a shared machine the
// load moves within seconds, and the median of the per-round ratios follows it better than one pair.
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const CONNECTIONS = 50;
const SERVERS = Number(process.env.BENCH_SERVERS ?? 50);
// The listed server has 20 sites; the database starts with SMALL_SITES and is filled up to BENCH_SITES.
const LIST_SITES = 20;
const SMALL_SITES = 100;
const BENCH_SITES = Number(process.env.BENCH_SITES ?? 100_000);
// BENCH_WORKER=off measures as the first round did (API only, jobs left queued).
const WORKER = process.env.BENCH_WORKER === 'off' ? 'off' : 'on';
const SERVICE_PORT = Number(process.env.BENCH_PORT ?? 18_480);
const RAW_PORT = SERVICE_PORT + 1;
// BENCH_CASES=create (comma-separated: raw,list,get,create,fill) runs only those, e.g. to profile one.
const CASES = new Set((process.env.BENCH_CASES ?? 'raw,list,get,create,fill').split(','));
// How the database is filled up to BENCH_SITES: `seed` (default) writes finished sites in bulk through
// the storage layer (bench/seed-sites.ts); `api` creates them through the API, their jobs run (slow).
// Seeding copies an installed site, so with the worker off the fill goes through the API.
const FILL = process.env.BENCH_FILL === 'api' || WORKER === 'off' ? 'api' : 'seed';
const base = `http://127.0.0.1:${SERVICE_PORT}`;
const dataDir = mkdtempSync(join(tmpdir(), 'siteplane-bench-'));
const env = {
  ...process.env,
  SITEPLANE_DATA_DIR: dataDir,
  HOST: '127.0.0.1',
  PORT: String(SERVICE_PORT),
  LOG_LEVEL: 'warn',
  SITEPLANE_WORKER: WORKER,
  // The bench measures throughput, far past any per-token limit.
  SITEPLANE_RATE_LIMIT: '0',
  SITEPLANE_RATE_LIMIT_ADDRESS: '0',
  // The create case makes sites by the thousand on BENCH_SERVERS servers of one team.
  SITEPLANE_QUOTA_SERVERS: '0',
  SITEPLANE_QUOTA_SITES: '0',
};
const children: ChildProcess[] = [];

const CLI = builtServiceCommand();
function cli(args: string[]): string {
  return execFileSync(process.execPath, [...CLI, ...args], { env, encoding: 'utf8' }).trim();
}
process.once('SIGTERM', () => process.exit(143));
// Whatever ends this process (a signal above, an exception such as EPIPE when its output is piped to
// `head`), the service and the raw server it started end with it; its data directory goes too.
process.once('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  rmSync(dataDir, { recursive: true, force: true });
});

async function waitFor(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {}
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up`);
}

async function api(token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json() as Promise<Record<string, unknown>>;
}

/** autocannon's result, and the p50 of its 2xx answers in fractions of a millisecond. */
type Measured = autocannon.Result & { p50Exact: number };

function run(which: string, title: string, opts: autocannon.Options): Promise<Measured | null> {
  if (!CASES.has(which)) return Promise.resolve(null);
  // autocannon's histogram keeps whole milliseconds: at a p50 of 2-4 ms that rounding alone moves a
  // ratio of two p50s by 25-50 %. Each answer's own time (hrtime, fractions of a ms) is kept instead.
  const times: number[] = [];
  return new Promise((resolve, reject) => {
    const instance = autocannon({ connections: CONNECTIONS, duration: DURATION, ...opts }, (err, result) =>
      err ? reject(err) : resolve(result),
    );
    instance.on('response', (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) times.push(ms);
    });
  }).then((r) => {
    times.sort((a, b) => a - b);
    const result = Object.assign(r as autocannon.Result, { p50Exact: times[Math.floor(times.length / 2)] ?? Number.NaN });
    const bad = result.non2xx + result.errors;
    console.log(
      `${title.padEnd(34)} ${result.requests.average.toFixed(0).padStart(7)} req/s   p50 ${result.p50Exact.toFixed(2)} ms   p99 ${result.latency.p99} ms${bad ? `   (${result.non2xx} non-2xx, ${result.errors} errors of which ${result.timeouts} timeouts)` : ''}`,
    );
    return result;
  });
}

/** Jobs finished so far, read from the service's SQLite file beside it (WAL: a reader waits on nobody). */
function jobsDone(): number {
  const db = new SQLite(join(dataDir, 'siteplane.db'), { readonly: true });
  try {
    return (db.prepare("SELECT count(*) AS n FROM jobs WHERE status = 'done'").get() as { n: number }).n;
  } finally {
    db.close();
  }
}

/** Waits until this site is installed: with one team, jobs are claimed oldest first, so the ones before it ran. */
async function installed(token: string, site: string): Promise<void> {
  if (WORKER === 'off') return;
  while ((await api(token, 'GET', `/api/v1/sites/${site}`)).status !== 'installed') await new Promise((r) => setTimeout(r, 250));
  // The jobs claimed just before it (WORKER_CONCURRENCY of them) may still be finishing.
  await new Promise((r) => setTimeout(r, 1000));
}

type Rounds = Record<'raw' | 'list' | 'get', Measured | null>[];

function median(rounds: Rounds, pick: (r: Rounds[number]) => number | undefined): number {
  const values = rounds
    .map(pick)
    .filter((v): v is number => v !== undefined)
    .sort((a, b) => a - b);
  return values.length ? (values[Math.floor(values.length / 2)] as number) : Number.NaN;
}

function ratioOf(a: number, b: number): string {
  return Number.isFinite(a / b) ? `${(a / b).toFixed(2)}x` : 'n/a';
}

/** The median over the rounds of the case's req/s divided by raw's in the same round. */
function ratio(rounds: Rounds, which: 'list' | 'get'): string {
  return ratioOf(
    median(rounds, (r) => (r[which] && r.raw ? r[which].requests.average / r.raw.requests.average : undefined)),
    1,
  );
}

function residentMemory(pid: number | undefined): string {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? 0);
  return `${(kb('VmRSS') / 1024).toFixed(0)} MB (peak ${(kb('VmHWM') / 1024).toFixed(0)} MB)`;
}

try {
  const token = cli(['token', 'create', '--name', 'bench']);
  // BENCH_PROFILE=<dir> writes a CPU profile of the service (open it in Chrome DevTools).
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  // Node's flags as `npm start` gives them (package.json), or BENCH_NODE_FLAGS to compare others.
  const nodeFlags = (process.env.BENCH_NODE_FLAGS ?? startFlags()).split(' ').filter(Boolean);
  const service = spawn(process.execPath, [...nodeFlags, ...profile, ...CLI, 'serve'], {
    env,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  children.push(service);
  await waitFor(`${base}/api/v1/health`);

  const servers: { server: string; serverUser: string }[] = [];
  for (let i = 0; i < SERVERS; i++) {
    const s = await api(token, 'POST', '/api/v1/servers', {
      name: `web-${i}`,
      ip: '127.0.0.1',
      connection: 'dry-run',
      facts: { php: ['8.2'] },
    });
    const u = await api(token, 'POST', `/api/v1/servers/${s.uuid}/users`, { username: 'deploy' });
    servers.push({ server: s.uuid as string, serverUser: u.uuid as string });
  }
  const createSite = async (ids: { server: string; serverUser: string }, domain: string) =>
    (await api(token, 'POST', '/api/v1/sites', { ...ids, type: 'static-html', domain, ssl: false, options: {} })).uuid as string;
  // The listed server's 20 sites, then the rest of the first 10^2 over the other servers.
  let lastSite = '';
  for (let j = 0; j < LIST_SITES; j++) lastSite = await createSite(servers[0] as (typeof servers)[0], `s${j}.srv0.example.com`);
  for (let j = LIST_SITES; j < SMALL_SITES - 1; j++)
    await createSite(servers[1 + (j % (SERVERS - 1))] as (typeof servers)[0], `s${j}.srv.example.com`);
  const firstSite = await createSite(servers[1] as (typeof servers)[0], 'first.bench.example.com');
  await installed(token, firstSite);
  const listPath = `/api/v1/sites?server=${servers[0]?.server}`;
  const listBytes = Buffer.from(await (await fetch(base + listPath, { headers: { authorization: `Bearer ${token}` } })).text());

  // The raw server decodes its body once; until 2026-11-27 it decoded it from the environment on
  // every request, which held the baseline back and flattered every ratio to it.
  const raw = spawn(
    process.execPath,
    [
      '-e',
      `const body=Buffer.from(process.env.BODY,'base64');require('http').createServer((q,s)=>{s.writeHead(200,{'content-type':'application/json'});s.end(body)}).listen(${RAW_PORT},'127.0.0.1')`,
    ],
    { env: { ...process.env, BODY: listBytes.toString('base64') }, stdio: 'inherit' },
  );
  children.push(raw);
  await waitFor(`http://127.0.0.1:${RAW_PORT}/`);

  console.log(
    `Siteplane bench — ${new Date().toISOString()} — ${cpus().length} × ${cpus()[0]?.model} — node ${process.version} — load average ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(
    `${SERVERS} servers on SQLite, worker ${WORKER}; ${CONNECTIONS} connections, ${DURATION} s each; list body ${listBytes.length} bytes; service: node ${nodeFlags.join(' ') || '(no flags)'}`,
  );
  console.log(`— with ${SMALL_SITES} sites in the database`);
  const headers = { authorization: `Bearer ${token}` };
  const targets = {
    raw: { url: `http://127.0.0.1:${RAW_PORT}/` },
    list: { url: base + listPath, headers },
    get: { url: `${base}/api/v1/sites/${lastSite}`, headers },
  };
  // One unrecorded second of each first: the first round used to measure the raw server's JIT
  // warming up (9,771 req/s in a first round, 14,125-15,296 in the next two of the same run).
  for (const [which, target] of Object.entries(targets)) {
    if (!CASES.has(which)) continue;
    await new Promise((resolve, reject) =>
      autocannon({ connections: CONNECTIONS, duration: 1, ...target }, (err) => (err ? reject(err) : resolve(null))),
    );
  }
  const reads = async () => {
    const rounds: Rounds = [];
    for (let r = 0; r < ROUNDS; r++) {
      const duration = Math.max(1, Math.round(DURATION / ROUNDS));
      rounds.push({
        raw: await run('raw', 'raw node:http, same list bytes', { ...targets.raw, duration }),
        list: await run('list', 'GET /sites?server= (20 sites)', { ...targets.list, duration }),
        get: await run('get', 'GET /sites/<uuid>', { ...targets.get, duration }),
      });
    }
    return rounds;
  };
  const small = await reads();
  let n = 0;
  const creates = (opts: Partial<autocannon.Options>): autocannon.Options => ({
    url: `${base}/api/v1/sites`,
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => {
          const ids = servers[1 + (n % (SERVERS - 1))];
          n++;
          return {
            ...req,
            body: JSON.stringify({ ...ids, type: 'static-html', domain: `b${n}.bench.example.com`, ssl: false, options: {} }),
          };
        },
      },
    ],
    ...opts,
  });
  const doneBefore = jobsDone();
  const create = await run('create', `POST /sites (worker ${WORKER})`, creates({}));
  if (create && WORKER === 'on') console.log(`  ${jobsDone() - doneBefore} jobs done during the creates`);
  let sites = SMALL_SITES + (create?.['2xx'] ?? 0);
  const fillStart = performance.now();
  if (CASES.has('fill') && sites < BENCH_SITES && FILL === 'api') {
    const fill = await run('fill', `  filling to ${BENCH_SITES} sites`, creates({ amount: BENCH_SITES - sites }));
    sites += fill?.['2xx'] ?? 0;
  }
  if (CASES.has('fill') && sites < BENCH_SITES && FILL === 'seed') {
    // Not the listed server (servers[0]) nor the read site's: the service's caches of those stay true.
    await seedFinishedSites({
      sqliteFile: join(dataDir, 'siteplane.db'),
      template: firstSite,
      servers: servers.slice(1),
      count: BENCH_SITES - sites,
    });
    sites = BENCH_SITES;
  }
  // Every job done (dry-run): the list is read as a quiet service would serve it.
  await installed(token, await createSite(servers[1] as (typeof servers)[0], 'last.bench.example.com'));
  sites++;
  console.log(
    `  ${sites} sites: filled (${FILL === 'seed' ? 'seeded in bulk through the storage layer' : 'through the API'}) and their jobs done in ${((performance.now() - fillStart) / 1000).toFixed(0)} s`,
  );
  console.log(`— with ${sites} sites in the database`);
  const large = await reads();
  const rss = residentMemory(service.pid);

  console.log('— summary (targets of issue 13); ratios: median of the rounds, each against raw in the same round');
  console.log(`list ${ratio(small, 'list')} of raw (>= 0.9x); get one ${ratio(small, 'get')} of raw (>= 0.7x)`);
  console.log(`at ${sites} sites: list ${ratio(large, 'list')}, get one ${ratio(large, 'get')} of raw`);
  console.log(
    `create ${create?.requests.average.toFixed(0) ?? 'n/a'} req/s, worker ${WORKER} (>= 4000 req/s with the worker on)`,
  );
  const p50 = (rounds: Rounds) => median(rounds, (r) => r.list?.p50Exact);
  console.log(
    `list p50 ${p50(large).toFixed(2)} ms at ${sites} sites vs ${p50(small).toFixed(2)} ms at ${SMALL_SITES}: ${ratioOf(p50(large), p50(small))} (<= 1.2x)`,
  );
  console.log(`API process resident memory after the run: ${rss} (<= 150 MB)`);
} finally {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dataDir, { recursive: true, force: true });
}
