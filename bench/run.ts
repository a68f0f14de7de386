// npm run bench: Siteplane on SQLite with 1,000 sites over 50 dry-run servers, driven over loopback
// by autocannon (list by server, get one site, create), next to a raw node:http server answering
// the same list bytes. Prints req/s, p50/p99 latency and the ratio to raw. Loopback only; every
// process it starts is stopped by PID at the end.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';

const DURATION = Number(process.env.BENCH_SECONDS ?? 10);
const CONNECTIONS = 50;
const SERVERS = Number(process.env.BENCH_SERVERS ?? 50);
const SITES_PER_SERVER = 20;
const SERVICE_PORT = Number(process.env.BENCH_PORT ?? 18_480);
const RAW_PORT = SERVICE_PORT + 1;
// BENCH_CASES=create (comma-separated: raw,list,get,create) runs only those, e.g. to profile one.
const CASES = new Set((process.env.BENCH_CASES ?? 'raw,list,get,create').split(','));
const base = `http://127.0.0.1:${SERVICE_PORT}`;
const dataDir = mkdtempSync(join(tmpdir(), 'siteplane-bench-'));
const env = {
  ...process.env,
  SITEPLANE_DATA_DIR: dataDir,
  HOST: '127.0.0.1',
  PORT: String(SERVICE_PORT),
  LOG_LEVEL: 'warn',
  SITEPLANE_WORKER: 'off',
  // The bench measures throughput, far past any per-token limit.
  SITEPLANE_RATE_LIMIT: '0',
  SITEPLANE_RATE_LIMIT_ADDRESS: '0',
  // The create case makes sites by the thousand on BENCH_SERVERS servers of one team.
  SITEPLANE_QUOTA_SERVERS: '0',
  SITEPLANE_QUOTA_SITES: '0',
};
const children: ChildProcess[] = [];

// node --import tsx runs the CLI in one process, so its PID is the one to stop.
const CLI = ['--import', 'tsx', 'packages/cli/src/main.ts'];
function cli(args: string[]): string {
  return execFileSync(process.execPath, [...CLI, ...args], { env, encoding: 'utf8' }).trim();
}
process.once('SIGTERM', () => {
  for (const child of children) if (child.pid) process.kill(child.pid, 'SIGTERM');
  process.exit(143);
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

function run(which: string, title: string, opts: autocannon.Options): Promise<autocannon.Result | null> {
  if (!CASES.has(which)) return Promise.resolve(null);
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration: DURATION, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
  }).then((r) => {
    const result = r as autocannon.Result;
    const bad = result.non2xx + result.errors + result.timeouts;
    console.log(
      `${title.padEnd(34)} ${result.requests.average.toFixed(0).padStart(7)} req/s   p50 ${result.latency.p50} ms   p99 ${result.latency.p99} ms${bad ? `   (${bad} non-2xx/errors)` : ''}`,
    );
    return result;
  });
}

try {
  const token = cli(['token', 'create', '--name', 'bench']);
  // BENCH_PROFILE=<dir> writes a CPU profile of the service (open it in Chrome DevTools).
  const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`] : [];
  const service = spawn(process.execPath, [...profile, ...CLI, 'serve'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
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
  let lastSite = '';
  for (const [i, ids] of servers.entries()) {
    for (let j = 0; j < SITES_PER_SERVER; j++) {
      const site = await api(token, 'POST', '/api/v1/sites', {
        ...ids,
        type: 'static-html',
        domain: `s${j}.srv${i}.example.com`,
        ssl: false,
        options: {},
      });
      lastSite = site.uuid as string;
    }
  }
  const listPath = `/api/v1/sites?server=${servers[0]?.server}`;
  const listBytes = Buffer.from(await (await fetch(base + listPath, { headers: { authorization: `Bearer ${token}` } })).text());

  const raw = spawn(
    process.execPath,
    [
      '-e',
      `require('http').createServer((q,s)=>{s.writeHead(200,{'content-type':'application/json'});s.end(Buffer.from(process.env.BODY,'base64'))}).listen(${RAW_PORT},'127.0.0.1')`,
    ],
    { env: { ...process.env, BODY: listBytes.toString('base64') }, stdio: 'inherit' },
  );
  children.push(raw);
  await waitFor(`http://127.0.0.1:${RAW_PORT}/`);

  console.log(`Siteplane bench — ${new Date().toISOString()} — ${cpus().length} × ${cpus()[0]?.model} — node ${process.version}`);
  console.log(
    `${SERVERS} servers × ${SITES_PER_SERVER} sites on SQLite; ${CONNECTIONS} connections, ${DURATION} s each; list body ${listBytes.length} bytes`,
  );
  const headers = { authorization: `Bearer ${token}` };
  const rawResult = await run('raw', 'raw node:http, same list bytes', { url: `http://127.0.0.1:${RAW_PORT}/` });
  const list = await run('list', 'GET /sites?server= (20 sites)', { url: base + listPath, headers });
  const get = await run('get', 'GET /sites/<uuid>', { url: `${base}/api/v1/sites/${lastSite}`, headers });
  let n = 0;
  const create = await run('create', 'POST /sites (dry-run server)', {
    url: `${base}/api/v1/sites`,
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    requests: [
      {
        setupRequest: (req) => {
          const ids = servers[n % SERVERS];
          n++;
          return {
            ...req,
            body: JSON.stringify({ ...ids, type: 'static-html', domain: `b${n}.bench.example.com`, ssl: false, options: {} }),
          };
        },
      },
    ],
  });
  const ratio = (r: autocannon.Result | null) =>
    r && rawResult ? `${(r.requests.average / rawResult.requests.average).toFixed(2)}x` : 'n/a';
  console.log(
    `ratio to raw: list ${ratio(list)}, get ${ratio(get)}; create ${create?.requests.average.toFixed(0) ?? 'n/a'} req/s (targets: list >= 0.7x, create >= 2000 req/s)`,
  );
} finally {
  for (const child of children) if (child.pid) process.kill(child.pid, 'SIGTERM');
  await new Promise((r) => setTimeout(r, 500));
  rmSync(dataDir, { recursive: true, force: true });
}
