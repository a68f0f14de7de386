import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonBody } from '../sites/support/harness.js';
import { hostRun, runHere, startTestHost, stopTestHost, type TestHost } from '../support/test-host.js';

/**
 * Issue 13, "done when": an operator follows docs/operating.md from a bare Debian machine to
 * Siteplane under systemd behind TLS, with metrics scraped and a nightly backup (docs/backups.md).
 * The machine is a pristine Debian 13 test host that boots its own systemd as PID 1
 * (test-host.sh --init systemd, index 14). The guide's commands are read from the docs and run as
 * written; what stands in for the operator's world is named where it happens: the release tarball
 * and the repository's deploy/ directory copied in (scp), a self-signed certificate where certbot
 * would put one, this machine's registry proxy CA for npm (the harness's, as on every test host).
 */
const HOST = 'operator';
const DOMAIN = 'siteplane.example.com';
const ROOT = resolve(import.meta.dirname, '../../../../..');
const OPERATING = readFileSync(join(ROOT, 'docs/operating.md'), 'utf8');
const BACKUPS = readFileSync(join(ROOT, 'docs/backups.md'), 'utf8');
const METRICS = readFileSync(join(ROOT, 'docs/operating-metrics.md'), 'utf8');
const VERSION = JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')).version as string;
/** Where the operator's copy of the tarball and of deploy/ is, on the machine. */
const WORK = '/root/siteplane';
// The harness's part (as for every test host): this machine's registry proxy CA, for npm.
const HARNESS_ENV = { NODE_EXTRA_CA_CERTS: '/etc/ssl/certs/ca-certificates.crt', DEBIAN_FRONTEND: 'noninteractive' };

/** The fenced blocks of a Markdown text with that info string, in order. */
function fenced(markdown: string, info: string): string[] {
  return [...markdown.matchAll(new RegExp(`^\`\`\`${info}\\n([\\s\\S]*?)^\`\`\`$`, 'gm'))].map((m) => m[1] as string);
}

/** The one block of that info string that contains `marker`. */
function blockWith(markdown: string, info: string, marker: string): string {
  const found = fenced(markdown, info).filter((b) => b.includes(marker));
  if (found.length !== 1) throw new Error(`expected one \`\`\`${info} block with ${marker}, found ${found.length}`);
  return found[0] as string;
}

let host: TestHost;
let dir: string;
const servers: { uuid: string; user: string }[] = [];
/** Sites created before the backup. */
const kept: string[] = [];
let ca: string;
let token = '';
/** SITEPLANE_METRICS_TOKEN, as an operator makes it (`openssl rand -hex 32`). */
const metricsToken = randomBytes(32).toString('hex');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A shell script run as root on the machine, in WORK, stopping at the first failing command. */
async function shell(script: string, timeoutMs = 60_000, env: Record<string, string> = {}): Promise<string> {
  const ran = await hostRun(host, 'bash', ['-euo', 'pipefail', '-c', `cd ${WORK}\n${script}`], {
    env: { ...HARNESS_ENV, ...env },
    timeoutMs,
  });
  if (ran.code !== 0) throw new Error(`exit ${ran.code}:\n${script}\n--- stdout\n${ran.stdout}\n--- stderr\n${ran.stderr}`);
  return ran.stdout;
}

interface Answer {
  status: number;
  body: string;
  json(): JsonBody;
}

/** A request to https://DOMAIN at the machine's address, trusting only the certificate put there. */
function https(method: string, path: string, options: { bearer?: string; body?: unknown; port?: number } = {}): Promise<Answer> {
  return new Promise((done, fail) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const req = request(
      {
        host: host.address,
        port: 443,
        servername: DOMAIN,
        ca,
        method,
        path,
        timeout: 10_000,
        headers: {
          host: DOMAIN,
          ...(options.bearer ? { authorization: `Bearer ${options.bearer}` } : {}),
          ...(payload ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8');
          done({ status: res.statusCode ?? 0, body, json: () => JSON.parse(body) });
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in 10 s`)));
    req.on('error', fail);
    req.end(payload);
  });
}

/**
 * Reads until `ok` holds (a reload, a restart or a scrape is asynchronous), at most `tries` times
 * `every` ms apart, and returns the last reading: the caller's expectation says what was wanted.
 */
async function until<T>(read: () => Promise<T>, ok: (value: T) => boolean, tries: number, every = 250): Promise<T> {
  let value = await read();
  for (let i = 1; i < tries && !ok(value); i++) {
    await sleep(every);
    value = await read();
  }
  return value;
}

/** Asks until `ok` holds; at most `tries` times, 250 ms apart (a minute: CI runs this beside three other suites). */
async function httpsUntil(path: string, ok: (a: Answer) => boolean, bearer?: string, tries = 240): Promise<Answer> {
  const answered = (a: Answer | Error) => !(a instanceof Error) && ok(a);
  const last = await until(() => https('GET', path, { bearer }).catch((error: Error) => error), answered, tries);
  if (!(last instanceof Error) && ok(last)) return last;
  throw new Error(
    `GET ${path} never answered as expected: ${last instanceof Error ? last.message : `${last.status} ${last.body}`}`,
  );
}

async function createSite(server: { uuid: string; user: string }, label: string): Promise<string> {
  const created = await https('POST', '/api/v1/sites', {
    bearer: token,
    body: {
      server: server.uuid,
      serverUser: server.user,
      type: 'static-html',
      domain: `${label}.example.net`,
      ssl: false,
      options: {},
    },
  });
  expect(created.status, created.body).toBe(202);
  const uuid = created.json().uuid as string;
  await httpsUntil(`/api/v1/sites/${uuid}`, (a) => a.status === 200 && a.json().status === 'installed', token);
  return uuid;
}

/** A dry-run server with a user `deploy`, through the proxy (kept in `servers`). */
async function createServer(): Promise<void> {
  const server = await https('POST', '/api/v1/servers', {
    bearer: token,
    body: { name: 'web-1', ip: '127.0.0.1', connection: 'dry-run', facts: {} },
  });
  expect(server.status, server.body).toBe(201);
  const user = await https('POST', `/api/v1/servers/${server.json().uuid}/users`, {
    bearer: token,
    body: { username: 'deploy' },
  });
  expect(user.status, user.body).toBe(201);
  servers.push({ uuid: server.json().uuid, user: user.json().uuid });
}

/** The sites of the dry-run server, as its list answers. */
async function siteUuids(): Promise<string[]> {
  const list = await https('GET', `/api/v1/sites?server=${servers[0]?.uuid}`, { bearer: token });
  expect(list.status, list.body).toBe(200);
  return (list.json().data as { uuid: string }[]).map((s) => s.uuid);
}

describe('docs/operating.md on a bare Debian 13 machine with systemd (issue 13: done when)', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'siteplane-operator-'));
    // What the guide's comment says to do on any machine with Node: the release tarball (npm pack).
    const packed = await runHere('npm', ['pack', '-w', 'packages/cli', '--pack-destination', dir], {
      cwd: ROOT,
      timeoutMs: 300_000,
    });
    if (packed.code !== 0) throw new Error(`npm pack failed: ${packed.stderr}`);
    host = await startTestHost(HOST, { index: 14, os: 'debian13', init: 'systemd' });
    // The operator's copy (scp): the tarball and the repository's deploy/ directory.
    mkdirSync(join(host.root, WORK.slice(1)), { recursive: true });
    cpSync(join(dir, `siteplane-cli-${VERSION}.tgz`), join(host.root, WORK.slice(1), `siteplane-cli-${VERSION}.tgz`));
    cpSync(join(ROOT, 'deploy'), join(host.root, WORK.slice(1), 'deploy'), { recursive: true });
  }, 360_000);

  afterAll(async () => {
    if (host) await stopTestHost(HOST);
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it(
    'section 1, as written: Node from Debian, the tarball, the user, the unit; the journal says it listens',
    async () => {
      const install = blockWith(OPERATING, 'sh', 'npm install -g');
      const follow = /^journalctl -u siteplane -f\s+# "(.+)"$/m.exec(install);
      expect(follow, 'the block ends by following the journal for the listening line').not.toBeNull();
      // `journalctl -f` follows for ever: the line its comment names is waited for instead.
      const script = install.replace(follow?.[0] as string, '').replaceAll('<version>', VERSION);
      await shell(script, 15 * 60_000);
      const listening = follow?.[1] as string;
      const journal = await until(
        () => shell('journalctl -u siteplane --no-pager -o cat'),
        (text) => text.includes(listening),
        240,
      );
      expect(journal).toContain(listening);
      // The unit as installed: active, under its own user, as sandboxed as the guide says.
      expect((await shell('systemctl is-active siteplane')).trim()).toBe('active');
      expect((await shell('ps -o user= -C node')).trim()).toBe('siteplane');
      const claimed = /`systemd-analyze security siteplane` rates it\s+([0-9.]+)/.exec(OPERATING)?.[1];
      const rated = /Overall exposure level for siteplane\.service: ([0-9.]+)/.exec(
        await shell('systemd-analyze security siteplane --no-pager 2>&1 || true'),
      )?.[1];
      expect(rated).toBe(claimed);
    },
    16 * 60_000,
  );

  it('the first token, with the command the guide gives', async () => {
    const command = /The first token: `([^`]+)`/.exec(OPERATING)?.[1];
    expect(command).toBeDefined();
    token = /^(sp_\S+)$/m.exec(await shell(command as string))?.[1] ?? '';
    expect(token).not.toBe('');
  });

  it(
    'section 2: nginx with TLS in front; the API answers through it, port 80 redirects',
    async () => {
      // certbot's part: a certificate for the name at the paths the configuration names.
      const live = join(host.root, 'etc/letsencrypt/live', DOMAIN);
      mkdirSync(live, { recursive: true });
      const made = spawnSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-days',
          '2',
          '-subj',
          `/CN=${DOMAIN}`,
          '-addext',
          `subjectAltName=DNS:${DOMAIN}`,
          '-keyout',
          join(live, 'privkey.pem'),
          '-out',
          join(live, 'fullchain.pem'),
        ],
        { encoding: 'utf8' },
      );
      expect(made.status, made.stderr).toBe(0);
      ca = readFileSync(join(live, 'fullchain.pem'), 'utf8');
      await shell('apt-get install -y nginx >/dev/null', 5 * 60_000);
      writeFileSync(join(host.root, 'etc/nginx/sites-enabled/siteplane'), blockWith(OPERATING, 'nginx', 'listen 443 ssl'));
      await shell('nginx -t 2>&1 && systemctl reload nginx');
      const health = await httpsUntil('/api/v1/health', (a) => a.status === 200);
      expect(health.json().parts).toEqual({ database: 'ok', worker: 'ok', acme: 'ok' });
      expect((await https('GET', '/api/v1/servers')).status).toBe(401);
      // Port 80: the old workers of the reload may still take a connection for a moment.
      const curl = ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{redirect_url}', '-H', `host: ${DOMAIN}`];
      const redirect = await until(
        async () =>
          spawnSync('curl', [...curl, `http://${host.address}/api/v1/health`], { encoding: 'utf8', timeout: 15_000 }).stdout,
        (answer) => answer.startsWith('301'),
        40,
      );
      expect(redirect).toBe(`301 https://${DOMAIN}/api/v1/health`);
    },
    6 * 60_000,
  );

  it('metrics: scraped through the proxy with their own token, as the scrape configuration does', async () => {
    await shell(`echo SITEPLANE_METRICS_TOKEN=${metricsToken} >> /etc/siteplane/siteplane.env && systemctl restart siteplane`);
    const scraped = await httpsUntil('/metrics', (a) => a.status === 200, metricsToken);
    expect(scraped.body).toMatch(/^siteplane_database_up 1$/m);
    // The API's tokens are not the scrape's.
    expect((await https('GET', '/metrics', { bearer: token })).status).toBe(401);
  }, 120_000);

  it(
    'Prometheus from Debian scrapes it through the proxy with the configuration of docs/operating-metrics.md',
    async () => {
      await shell('apt-get install -y --no-install-recommends prometheus >/dev/null', 5 * 60_000);
      const etc = join(host.root, 'etc/prometheus');
      // The harness's part: the name resolves here (the machine has no DNS) and the stand-in
      // certificate is trusted (a public CA's would be without this line); a scrape every 2 s, not 1 min.
      writeFileSync(join(host.root, 'etc/hosts'), `127.0.0.1\t${DOMAIN}\n`, { flag: 'a' });
      writeFileSync(join(etc, 'siteplane-ca.pem'), ca);
      const scrape = blockWith(METRICS, 'yaml', 'job_name: siteplane').replace(
        /^( +)scheme: https$/m,
        '$1scheme: https\n$1tls_config: { ca_file: /etc/prometheus/siteplane-ca.pem }',
      );
      writeFileSync(join(etc, 'prometheus.yml'), `global: { scrape_interval: 2s }\n${scrape}`);
      writeFileSync(join(etc, 'siteplane-token'), metricsToken, { mode: 0o640 });
      await shell('chgrp prometheus /etc/prometheus/siteplane-token && systemctl restart prometheus');
      const query = (q: string) =>
        new Promise<string>((done, fail) =>
          get(`http://${host.address}:9090/api/v1/query?query=${encodeURIComponent(q)}`, { timeout: 5_000 }, (res) => {
            let body = '';
            res.on('data', (c: Buffer) => {
              body += c.toString('utf8');
            });
            res.on('end', () => done(body));
          }).on('error', fail),
        );
      const answer = await until(
        () => query('siteplane_database_up{job="siteplane"} == 1').catch((e: Error) => e.message),
        (body) => body.includes('"value":['),
        120,
        500,
      );
      expect(answer).toMatch(/"instance":"siteplane\.example\.com:443"/);
      expect(answer).toMatch(/"value":\[[0-9.]+,"1"\]/);
    },
    6 * 60_000,
  );

  it('the service does its work under the sandbox: a site on a dry-run server is installed', async () => {
    await createServer();
    kept.push(await createSite(servers[0] as { uuid: string; user: string }, 'kept'));
  }, 120_000);

  it('docs/backups.md: the nightly timer is scheduled, its service backs up; a restore as written brings that state back', async () => {
    const timer = await shell(blockWith(BACKUPS, 'sh', 'siteplane-backup.timer'), 120_000);
    expect(timer).toMatch(/siteplane-backup\.timer\s+siteplane-backup\.service/);
    // Set-up, as backups.md asks once: a copy of the key where the backups go.
    await shell('install -m 0600 /var/lib/siteplane/secret.key /var/backups/siteplane/secret.key');
    const written = await shell(
      "journalctl -t siteplane-backup --no-pager -o cat; stat -c '%U %a %n' /var/backups/siteplane/siteplane-*.db",
    );
    expect(written).toMatch(/^ {2}sites: {2}1$/m);
    const file = /^siteplane 600 (\/var\/backups\/siteplane\/siteplane-\d{4}-\d\d-\d\d\.db)$/m.exec(written)?.[1];
    expect(file, written).toBeDefined();

    // A site acknowledged after the backup is not in it: after the restore it is gone again.
    const later = await createSite(servers[0] as { uuid: string; user: string }, 'later');
    expect(await siteUuids()).toEqual(expect.arrayContaining([...kept, later]));
    const restore = blockWith(BACKUPS, 'sh', 'siteplane restore').replace(
      /\/var\/backups\/siteplane\/siteplane-\d{4}-\d\d-\d\d\.db/,
      file as string,
    );
    await shell(restore, 120_000);
    await httpsUntil('/api/v1/health', (a) => a.status === 200);
    const after = await siteUuids();
    expect(after).toEqual(expect.arrayContaining(kept));
    expect(after).not.toContain(later);
    // The restored database is the service's user's: it writes to it (a site is created).
    expect(await shell("stat -c '%U %a' /var/lib/siteplane/siteplane.db")).toBe('siteplane 600\n');
    await createSite(servers[0] as { uuid: string; user: string }, 'after-restore');
    expect((await shell('systemctl --failed --no-legend --plain')).trim()).toBe('');
  }, 300_000);

  it(
    'section 3 as written: PostgreSQL beside it, a second API-only process, both behind the proxy',
    async () => {
      await shell(blockWith(OPERATING, 'sh', 'CREATE ROLE siteplane'), 10 * 60_000);
      // nginx: the upstream block, and the server block of section 2 passing to it.
      const upstream = blockWith(OPERATING, 'nginx', 'upstream siteplane').split('\n')[0] as string;
      const proxy = blockWith(OPERATING, 'nginx', 'listen 443 ssl').replace(
        'proxy_pass http://127.0.0.1:8080;',
        'proxy_pass http://siteplane;',
      );
      writeFileSync(join(host.root, 'etc/nginx/sites-enabled/siteplane'), `${upstream}\n${proxy}`);
      await shell('nginx -t 2>&1 && systemctl reload nginx');
      expect((await shell('systemctl is-active siteplane siteplane-api2')).split('\n').slice(0, 2)).toEqual(['active', 'active']);
      // A new database: the first token again, with the command of section 1.
      token = /^(sp_\S+)$/m.exec(await shell(/The first token: `([^`]+)`/.exec(OPERATING)?.[1] as string))?.[1] ?? '';
      expect(token).not.toBe('');
      // Each process asked directly, on the machine (Node is there): what the proxy hides.
      const direct = async (port: number, path: string): Promise<JsonBody> =>
        JSON.parse(
          await shell(
            `node -e 'fetch("http://127.0.0.1:${port}${path}", { headers: { authorization: "Bearer " + process.env.T } }).then((r) => r.text()).then((t) => process.stdout.write(t))'`,
            30_000,
            { T: token },
          ),
        );
      // `systemctl restart` returns once the process runs (Type=simple); it listens after its
      // migrations, later on a loaded machine: each unit's journal is read until it says so.
      for (const unit of ['siteplane', 'siteplane-api2']) {
        const started = await until(
          async () =>
            Number((await shell(`journalctl -u ${unit} --no-pager -o cat | grep -c 'storage: PostgreSQL' || true`)).trim()),
          (lines) => lines > 0,
          240,
        );
        expect(started, unit).toBeGreaterThan(0);
      }
      expect((await direct(8081, '/api/v1/health')).parts?.database).toBe('ok');
      // Creates through the proxy (nginx takes turns between the two), each installed by the one
      // worker (process 1's), each in both processes' lists on the next request.
      await httpsUntil('/api/v1/health', (a) => a.status === 200, token);
      servers.length = 0;
      await createServer();
      const created: string[] = [];
      for (let i = 0; i < 4; i++) created.push(await createSite(servers[0] as { uuid: string; user: string }, `pg-${i}`));
      for (const port of [8080, 8081]) {
        const list = await direct(port, `/api/v1/sites?server=${servers[0]?.uuid}`);
        expect((list.data as { uuid: string }[] | undefined)?.map((site) => site.uuid)).toEqual(created);
      }
      // The SQLite backup's timer would now fail every night: the guide says so and turns it off.
      const refused = await hostRun(host, 'systemctl', ['start', 'siteplane-backup.service']);
      expect(refused.code).not.toBe(0);
      expect(await shell('journalctl -t siteplane-backup --no-pager -o cat')).toContain('DATABASE_URL is set');
      await shell(/turn it off \(`([^`]+)`\)/.exec(OPERATING)?.[1] as string);
      expect(await shell('systemctl is-enabled siteplane-backup.timer || true')).toBe('disabled\n');
    },
    15 * 60_000,
  );
});
