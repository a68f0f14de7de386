import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * The real `siteplane` command as child processes (node with tsx's loader, as
 * `npx tsx packages/cli/src/main.ts` runs it), for tests of commands an operator runs next to a
 * running service: `serve`, `token`, `backup`, `restore`.
 */
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));

/** The environment without the caller's database, key and data-dir settings, which would point elsewhere. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { DATABASE_URL: _d, SITEPLANE_SECRET_KEY: _k, SITEPLANE_DATA_DIR: _s, ...rest } = process.env;
  return { ...rest, LOG_LEVEL: 'warn', SITEPLANE_RATE_LIMIT: '0', SITEPLANE_RATE_LIMIT_ADDRESS: '0', ...extra };
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function start(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'packages/cli/src/main.ts', ...args], {
    cwd: ROOT,
    env: cleanEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** `siteplane <args>`; resolves when it exits (never rejects). */
export function siteplane(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = start(args, env);
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (c: Buffer) => {
      stdout += c.toString();
    });
    child.stderr?.on('data', (c: Buffer) => {
      stderr += c.toString();
    });
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** `siteplane serve` with `env` on 127.0.0.1, any free port; resolves with its address. Push it to `children` to stop it. */
export async function serve(env: Record<string, string>, startMs = 60_000): Promise<{ child: ChildProcess; base: string }> {
  const child = start(['serve'], { HOST: '127.0.0.1', PORT: '0', ...env });
  let output = '';
  const base = await new Promise<string>((resolve, reject) => {
    // One that never says it listens is stopped here: the caller has no handle on it to stop.
    const timer = setTimeout(() => {
      child.kill('SIGTERM');
      reject(new Error(`serve did not start: ${output}`));
    }, startMs);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output);
      if (match?.[1]) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${output}`)));
  });
  return { child, base };
}

/** SIGTERM (serve closes its database) and wait for the exit. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

/** JSON calls with a bearer token. */
export function api(base: string, token: string) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
}

/**
 * A stream of site creates on a dry-run server from `clients` concurrent clients until `stop()`:
 * `acknowledged` holds the uuid of every create answered 202, in order; `failures` every other answer.
 */
export function createStream(call: ReturnType<typeof api>, ids: { server: string; serverUser: string }, clients = 4) {
  const acknowledged: string[] = [];
  const failures: string[] = [];
  let running = true;
  let n = 0;
  const client = async () => {
    while (running) {
      const i = n++;
      const res = await call('POST', '/api/v1/sites', {
        ...ids,
        type: 'static-html',
        domain: `s${i}.example.com`,
        ssl: false,
        options: {},
      });
      if (res.status === 202) acknowledged.push(String(res.body.uuid));
      else failures.push(`${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  const done = Promise.all(Array.from({ length: clients }, client));
  return {
    acknowledged,
    failures,
    /** Resolves once `count` creates in all were acknowledged. */
    async until(count: number) {
      while (acknowledged.length < count) {
        if (!running) throw new Error('the stream was stopped');
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    async stop() {
      running = false;
      await done;
    },
  };
}

/** A dry-run server with declared facts and its server user `deploy`. */
export async function dryRunServer(call: ReturnType<typeof api>): Promise<{ server: string; serverUser: string }> {
  const server = await call('POST', '/api/v1/servers', {
    name: 'web-1',
    ip: '127.0.0.1',
    connection: 'dry-run',
    facts: { os: 'Debian 12', php: ['8.2'], node: null, mysql: null, postgresql: null },
  });
  if (server.status !== 201) throw new Error(`server: ${JSON.stringify(server.body)}`);
  const user = await call('POST', `/api/v1/servers/${server.body.uuid}/users`, { username: 'deploy' });
  if (user.status !== 201) throw new Error(`user: ${JSON.stringify(user.body)}`);
  return { server: String(server.body.uuid), serverUser: String(user.body.uuid) };
}
