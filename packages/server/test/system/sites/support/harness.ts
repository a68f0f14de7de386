import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { buildService, type Service } from '../../../../src/app/build-service.js';
import { loadConfig } from '../../../../src/app/config.js';
import { executorFactory } from '../../../../src/app/executors.js';
import { defaultRecipes } from '../../../../src/app/recipes.js';
import { SshExecutorPool } from '../../../../src/app/ssh-executor-pool.js';
import type { SiteJobDeps } from '../../../../src/jobs/site-job.js';
import type { CommandResult, Executor, RunOptions } from '../../../../src/provisioning/executor.js';
import { createToken } from '../../../../src/storage/tokens.js';
import { authorizeOnHost, unauthorizeOnHost } from '../../support/test-host.js';
import {
  daemonsBefore,
  fpmPidFile,
  livePid,
  NGINX_PID_FILE,
  pathKind,
  pm2Kill,
  run,
  server,
  stopDaemonsStartedSince,
} from './host.js';

/**
 * The sources a server that reaches only Debian's and npm's registries installs from (the test
 * host is such a server): Node's official binaries from the npm registry, WordPress and phpMyAdmin
 * from Debian's packages, the distribution's own database engines and PHP. Production keeps the upstream
 * defaults (README, Configuration).
 */
export const APP_SOURCES = {
  NODE_SOURCE: 'npm',
  WORDPRESS_SOURCE: 'debian',
  PHPMYADMIN_SOURCE: 'debian',
  DB_ENGINE_SOURCE: 'distribution',
  PHP_SOURCE: 'distribution',
};

/** A JSON response body as the tests read it: many shapes, asserted on field by field. */
// biome-ignore lint/suspicious/noExplicitAny: JSON of many shapes; the assertions check the fields
export type JsonBody = Record<string, any>;

export interface ApiAnswer {
  status: number;
  body: JsonBody;
}

export interface OperationView {
  uuid: string;
  kind: string;
  status: string;
  error: { step: string | null; exit_code: number | null; message: string } | null;
  steps: { index: number; name: string; status: string; exit_code: number | null; started_at: string }[];
  logs: { seq: number; at: string; line: string }[];
}

/** One command an executor was asked to run, with when it started and ended (ms, performance.now). */
export interface RecordedRun {
  server: string;
  /** Which executor ran it: one per job. */
  exec: number;
  argv: readonly string[];
  start: number;
  end: number;
}

/**
 * Wraps the executor of every job: records each command (one SSH round trip each) and lets a test
 * slow some down or hold them (`hook`). The wrapped executor keeps runDetached when it has one.
 */
export class ExecutorProbe {
  readonly runs: RecordedRun[] = [];
  /** Every executor handed to a job (to close what a "crashed" service left open). */
  readonly executors: Executor[] = [];
  /** Runs before each command and after it returned (its result already in hand). */
  hook: ((argv: readonly string[], phase: 'before' | 'after') => Promise<void>) | null = null;

  wrap(inner: Executor, server: string): Executor {
    const exec = this.executors.push(inner) - 1;
    const record = async <T extends CommandResult>(argv: readonly string[], call: () => Promise<T>): Promise<T> => {
      // A 'before' hook that delays stands for a slower command: its wait counts as the command's time.
      const start = performance.now();
      if (this.hook) await this.hook(argv, 'before');
      let result: T;
      try {
        result = await call();
      } finally {
        this.runs.push({ server, exec, argv, start, end: performance.now() });
      }
      if (this.hook) await this.hook(argv, 'after');
      return result;
    };
    const wrapped: Executor & { runDetached?: (argv: readonly string[], o?: RunOptions) => Promise<CommandResult> } = {
      kind: inner.kind,
      run: (argv, options) => record(argv, () => inner.run(argv, options)),
      close: () => inner.close(),
    };
    const detached = (inner as { runDetached?: (argv: readonly string[], o?: RunOptions) => Promise<CommandResult> }).runDetached;
    if (typeof detached === 'function') {
      wrapped.runDetached = (argv, options) => record(argv, () => detached.call(inner, argv, options));
    }
    return wrapped;
  }
}

export interface HarnessOptions {
  /** The system user that owns this suite's sites (created on the server by the first site). */
  username: string;
  leaseMs?: number;
  probe?: ExecutorProbe;
  /** An existing data directory and secret key (a restarted service); otherwise fresh ones. */
  env?: Record<string, string>;
  /** Where the service's log goes (every level from debug); silent otherwise. */
  logStream?: NodeJS.WritableStream;
}

export type ApiCall = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: unknown) => Promise<ApiAnswer>;

/** The API as a client sees it: in-process (app.inject) or over HTTP to a `siteplane serve` process. */
export class SitesClient {
  server = '';
  serverUser = '';
  publicKey = '';
  facts: Record<string, unknown> = {};

  constructor(
    readonly api: ApiCall,
    readonly username: string,
  ) {}

  /** POST /servers (ssh to the test host as root), authorise its key, POST /verify, add the server user. */
  async registerServer(): Promise<JsonBody> {
    const host = server();
    const created = await this.api('POST', '/api/v1/servers', {
      name: `${host.name}-${this.username}`,
      ip: host.address,
      connection: 'ssh',
      sshPort: host.port,
      sshUser: 'root',
    });
    if (created.status !== 201) throw new Error(`POST /servers: ${created.status} ${JSON.stringify(created.body)}`);
    this.server = created.body.uuid;
    this.publicKey = String(created.body.public_key).trim();
    authorizeKey(this.publicKey);
    const verified = await this.api('POST', `/api/v1/servers/${this.server}/verify`);
    if (verified.status !== 200) throw new Error(`verify: ${verified.status} ${JSON.stringify(verified.body)}`);
    this.facts = verified.body.facts;
    const user = await this.api('POST', `/api/v1/servers/${this.server}/users`, { username: this.username });
    if (user.status !== 201) throw new Error(`POST /users: ${user.status} ${JSON.stringify(user.body)}`);
    this.serverUser = user.body.uuid;
    return verified.body;
  }

  /** POST /sites for this server and user; returns the 202 body (or throws with the problem). */
  async createSite(type: string, domain: string, options: Record<string, unknown> = {}): Promise<JsonBody> {
    const res = await this.postSite(type, domain, options);
    if (res.status !== 202) throw new Error(`POST /sites ${type}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  postSite(type: string, domain: string, options: Record<string, unknown> = {}): Promise<ApiAnswer> {
    return this.api('POST', '/api/v1/sites', {
      server: this.server,
      serverUser: this.serverUser,
      type,
      domain,
      ssl: false,
      options,
    });
  }

  async deleteSite(uuid: string, deleteDatabase?: boolean): Promise<JsonBody> {
    const res = await this.api('DELETE', `/api/v1/sites/${uuid}`, deleteDatabase === undefined ? undefined : { deleteDatabase });
    if (res.status !== 202) throw new Error(`DELETE /sites/${uuid}: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  async operation(uuid: string): Promise<OperationView> {
    const res = await this.api('GET', `/api/v1/operations/${uuid}?limit=1000`);
    if (res.status !== 200) throw new Error(`GET /operations/${uuid}: ${res.status}`);
    return res.body as OperationView;
  }

  /** Polls GET /sites/<uuid> until its status is one of `states` ('gone' = 404). */
  async waitFor(uuid: string, states: string[], timeoutMs = 60_000, pollMs = 20): Promise<JsonBody> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const res = await this.api('GET', `/api/v1/sites/${uuid}`);
      const body = res.status === 404 ? { status: 'gone' } : res.body;
      if (states.includes(String(body.status))) return body;
      if (Date.now() > until) {
        const op = body.operation ? await this.operation(body.operation.uuid) : null;
        throw new Error(`site ${uuid} stayed ${String(body.status)}; operation: ${describeOperation(op)}`);
      }
      await new Promise((r) => setTimeout(r, pollMs));
    }
  }

  /** Waits for `installed`, failing with the operation's error and last log lines otherwise. */
  async waitInstalled(site: JsonBody, timeoutMs = 60_000): Promise<JsonBody> {
    const done = await this.waitFor(site.uuid, ['installed', 'failed'], timeoutMs);
    if (done.status !== 'installed') {
      throw new Error(`${site.type} ${site.domain} failed: ${describeOperation(await this.operation(site.operation.uuid))}`);
    }
    return done;
  }

  async waitGone(site: JsonBody, operationUuid: string, timeoutMs = 60_000): Promise<void> {
    const done = await this.waitFor(site.uuid, ['gone', 'delete_failed'], timeoutMs);
    if (done.status !== 'gone') {
      throw new Error(`deleting ${site.domain} failed: ${describeOperation(await this.operation(operationUuid))}`);
    }
  }

  /**
   * Deletes (with deleteDatabase) every site of this server still there — what a failed test left —
   * so that a failing run does not leave vhosts, pools or databases behind.
   */
  async sweep(): Promise<void> {
    if (!this.server) return;
    const list = await this.api('GET', `/api/v1/sites?server=${this.server}&limit=500`);
    const left = ((list.body.data as JsonBody[] | undefined) ?? []).filter((s) => s.status !== 'deleting');
    await Promise.allSettled(
      left.map(async (site) => {
        const del = await this.deleteSite(site.uuid, true);
        await this.waitGone(site, del.operation.uuid, 60_000);
      }),
    );
  }
}

/** An ApiCall over HTTP (a `siteplane serve` child process). */
export function httpApi(base: string, token: string): ApiCall {
  return async (method, url, payload) => {
    const res = await fetch(`${base}${url}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as JsonBody) : {} };
  };
}

/**
 * The service (real recipes, SSH executor) in-process, reached through app.inject, with the
 * loopback server registered over the API: POST /servers, its public key authorised for the test
 * sshd, POST /verify, and a server user.
 */
export class Harness extends SitesClient {
  private daemons: { nginx: number | null; fpm: number | null } = { nginx: null, fpm: null };
  /** The service's SSH connections (one per server), closed by stop() or by a test that "crashed" it. */
  sshPool = new SshExecutorPool();

  private constructor(
    readonly service: Service,
    token: string,
    /** A data directory this harness made (removed by stop), or null when the caller gave one. */
    private readonly ownDataDir: string | null,
    username: string,
  ) {
    super(async (method, url, payload) => {
      const res = await service.app.inject({
        method,
        url,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(payload === undefined ? {} : { payload: JSON.stringify(payload) }),
      });
      return { status: res.statusCode, body: res.body ? (JSON.parse(res.body) as JsonBody) : {} };
    }, username);
  }

  /**
   * A service on SQLite in a fresh data directory, or on `env.SITEPLANE_DATA_DIR` (with its
   * SITEPLANE_SECRET_KEY) — a second service on the same data directory is a restart.
   */
  static async start(options: HarnessOptions): Promise<Harness> {
    server();
    const ownDataDir = options.env?.SITEPLANE_DATA_DIR ? null : mkdtempSync(join(tmpdir(), 'siteplane-sites-'));
    const config = loadConfig({
      SITEPLANE_DATA_DIR: ownDataDir ?? undefined,
      SITEPLANE_SECRET_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'silent',
      // Operations are polled far more often than a client would; no per-token limit here.
      SITEPLANE_RATE_LIMIT: '0',
      SITEPLANE_RATE_LIMIT_ADDRESS: '0',
      ...APP_SOURCES,
      ...options.env,
    });
    let factory: SiteJobDeps['executorFor'] | null = null;
    const service = await buildService(config, {
      logger: options.logStream ? pino({ level: 'debug' }, options.logStream) : pino({ level: 'silent' }),
      recipes: defaultRecipes,
      pollMs: 50,
      ...(options.leaseMs ? { leaseMs: options.leaseMs } : {}),
      executorFor: async (server, log) => {
        if (!factory) throw new Error('executor factory not ready');
        const exec = await factory(server, log);
        return options.probe ? options.probe.wrap(exec, server.uuid) : exec;
      },
    });
    const sshPool = new SshExecutorPool();
    factory = executorFactory(service.useCases.secrets, sshPool);
    const { token } = await createToken(service.storage.db, { name: `sites-${randomBytes(4).toString('hex')}`, scope: 'write' });
    const harness = new Harness(service, token, ownDataDir, options.username);
    harness.sshPool = sshPool;
    harness.daemons = await daemonsBefore();
    return harness;
  }

  /** Stops what the suite started (the user's PM2, nginx/php-fpm if they were not running), unauthorises the key. */
  async stop(): Promise<void> {
    await this.sweep().catch(() => undefined);
    // The service first: a job still running would start nginx again.
    await this.service.close();
    await this.sshPool.closeAll();
    if (this.ownDataDir) rmSync(this.ownDataDir, { recursive: true, force: true });
    await pm2Kill(this.username).catch(() => undefined);
    if (this.publicKey) unauthorizeKey(this.publicKey);
    await stopDaemonsStartedSince(this.daemons);
  }
}

export function describeOperation(op: OperationView | null): string {
  if (!op) return '(none)';
  const failed = op.steps.filter((s) => s.status !== 'succeeded').map((s) => `${s.name}: ${s.status}`);
  return `${op.status} ${JSON.stringify(op.error)} steps [${failed.join(', ')}]\n  ${op.logs
    .slice(-25)
    .map((l) => l.line)
    .join('\n  ')}`;
}

/** Authorises the server's public key for root on the test host (what an operator does on a new server). */
export function authorizeKey(publicKey: string): void {
  authorizeOnHost(server(), publicKey);
}

export function unauthorizeKey(publicKey: string): void {
  unauthorizeOnHost(server(), publicKey);
}

/** A short random label: each run uses fresh domains, users and database names. */
export function runId(): string {
  return randomBytes(3).toString('hex');
}

/**
 * Removes a system user this suite created, with its home — after its sites are gone. When a
 * failed run could not delete them through the API (the server unreachable), what they left on
 * the server is removed first: vhosts, logs and ACME directories of this run's domains
 * (`*<runId>.siteplane.test`), the user's PHP-FPM pools; nginx and php-fpm then reload, so no
 * configuration names a missing user.
 */
export async function removeSystemUser(username: string, runIdOfDomains?: string): Promise<void> {
  if (!/^sp[a-z0-9]+$/.test(username)) throw new Error(`refusing to remove user ${username}`);
  if (runIdOfDomains !== undefined && !/^[a-z0-9]+$/.test(runIdOfDomains)) throw new Error(`unexpected run id ${runIdOfDomains}`);
  // A constant script; the user and the run id are positional arguments (checked above).
  const sweep = await run('sh', [
    '-c',
    `n=0
for d in /etc/nginx/sites-enabled /etc/nginx/sites-available /var/log/nginx /var/lib/siteplane/acme; do
  [ -n "$2" ] && [ -d "$d" ] || continue
  for f in "$d"/*"$2".siteplane.test*; do [ -e "$f" ] || [ -L "$f" ] || continue; rm -rf -- "$f"; n=1; done
done
for f in /etc/php/*/fpm/pool.d/"$1".conf*; do [ -e "$f" ] || continue; rm -f -- "$f"; n=1; done
echo "$n"`,
    'sh',
    username,
    runIdOfDomains ?? '',
  ]);
  if (sweep.stdout.trim() === '1') {
    if ((await livePid(NGINX_PID_FILE)) !== null) await run('nginx', ['-s', 'reload']);
    const fpm = await livePid(fpmPidFile());
    if (fpm !== null) await run('kill', ['-USR2', String(fpm)]);
  }
  if ((await run('getent', ['passwd', username])).code !== 0) return;
  await pm2Kill(username);
  await run('userdel', ['--remove', username]);
  if (pathKind(`/home/${username}`) !== null) await run('rm', ['-rf', '--', `/home/${username}`]);
}
