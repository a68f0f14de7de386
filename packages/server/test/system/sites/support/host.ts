import { execFile } from 'node:child_process';
import {
  findTestHost,
  hostPhp,
  hostRun,
  hostRunSync,
  type Ran,
  requireTestHost,
  SHARED_HOST,
  type TestHost,
} from '../../support/test-host.js';

export type { Ran } from '../../support/test-host.js';

/**
 * Looks at the server the suite provisions over SSH — the pristine test host
 * (scripts/test-env/test-host.sh) — from the outside: files, processes, nginx answers (databases:
 * databases.ts), the way an operator would check by hand. Commands on the server run inside the
 * host through nsenter; `runHere` runs a client (curl) on this machine. Every command is an argv (no
 * shell), so hostile passwords reach the clients literally.
 */
let current: TestHost | null = null;

/** The host this file's suite checks: the shared one unless the suite started its own (useHost). */
export function server(): TestHost {
  current ??= requireTestHost(SHARED_HOST);
  return current;
}

export function useHost(host: TestHost): void {
  current = host;
}

export function sharedHostRunning(): boolean {
  return findTestHost(SHARED_HOST) !== null;
}

/** Runs a command as root on the server. */
export function run(
  command: string,
  args: readonly string[],
  options: { input?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<Ran> {
  return hostRun(server(), command, args, options);
}

/** Runs a command on this machine (the clients: curl). */
export function runHere(
  command: string,
  args: readonly string[],
  options: { input?: string; timeoutMs?: number } = {},
): Promise<Ran> {
  return new Promise((resolve) => {
    const child = execFile(
      command,
      [...args],
      { timeout: options.timeoutMs ?? 30_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : 1) : 0;
        resolve({ code, stdout: String(stdout), stderr: String(stderr) });
      },
    );
    // A program that exits without reading its input (curl) closes the pipe early.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}

export async function mustRun(command: string, args: readonly string[], options: Parameters<typeof run>[2] = {}) {
  const result = await run(command, args, options);
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.code}: ${result.stderr}${result.stdout}`);
  return result;
}

/** What lstat sees at path on the server (symlinks not followed), or null. */
export function pathKind(path: string): 'file' | 'directory' | 'symlink' | 'other' | null {
  const result = hostRunSync(server(), 'stat', ['-c', '%F', '--', path]);
  if (result.code !== 0) return null;
  const kind = result.stdout.trim();
  if (kind === 'symbolic link') return 'symlink';
  if (kind === 'directory') return 'directory';
  if (kind.startsWith('regular')) return 'file';
  return 'other';
}

/** The names in a directory on the server (none when it does not exist). */
export async function listDir(path: string): Promise<string[]> {
  const result = await run('ls', ['-A', '--', path]);
  return result.code === 0 ? result.stdout.split('\n').filter(Boolean) : [];
}

export interface HttpAnswer {
  status: number;
  headers: string;
  body: string;
}

/** A request to the server's nginx (port 80) for `domain`, as `curl --resolve` makes it (no DNS needed). */
export async function curlSite(domain: string, path = '/', extra: readonly string[] = []): Promise<HttpAnswer> {
  const result = await runHere('curl', [
    '-sS',
    '--max-time',
    '10',
    '--resolve',
    `${domain}:80:${server().address}`,
    '-D',
    '-',
    ...extra,
    `http://${domain}${path}`,
  ]);
  if (result.code !== 0) return { status: 0, headers: '', body: result.stderr };
  // -D - prints every response's headers (a 100 Continue too) before the body.
  const blocks = result.stdout.split('\r\n\r\n');
  let index = 0;
  while (index < blocks.length - 1 && /^HTTP\/[\d.]+ 1\d\d/.test(blocks[index] ?? '')) index++;
  const headers = blocks[index] ?? '';
  const status = Number(/^HTTP\/[\d.]+ (\d{3})/.exec(headers)?.[1] ?? 0);
  return { status, headers, body: blocks.slice(index + 1).join('\r\n\r\n') };
}

/**
 * curlSite until `accept` holds, for at most timeoutMs: `nginx -s reload` returns before the new
 * workers take over, so a site that just became `installed` may need a few milliseconds more.
 */
export async function curlUntil(
  domain: string,
  path: string,
  accept: (answer: HttpAnswer) => boolean,
  timeoutMs = 5_000,
): Promise<HttpAnswer> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const answer = await curlSite(domain, path);
    if (accept(answer) || Date.now() > until) return answer;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Logs in to a phpMyAdmin site as a browser does (cookie form: token and session from the login
 * page, then POST) and returns the title of the page it lands on: `<host> / localhost | phpMyAdmin …`
 * once logged in, the bare login page's otherwise.
 */
export async function phpMyAdminLogin(domain: string, user: string, password: string): Promise<string> {
  const jar = `/tmp/siteplane-pma-${process.pid}-${Date.now()}.cookies`;
  const curl = (extra: string[], path: string) =>
    runHere('curl', [
      '-sS',
      '-L',
      '--max-time',
      '20',
      '--resolve',
      `${domain}:80:${server().address}`,
      '-c',
      jar,
      '-b',
      jar,
      ...extra,
      `http://${domain}${path}`,
    ]);
  try {
    const page = (await curl([], '/')).stdout;
    const token = /name="token" value="([^"]+)"/.exec(page)?.[1] ?? '';
    const session = /name="set_session" value="([^"]+)"/.exec(page)?.[1] ?? '';
    const form = { token, set_session: session, pma_username: user, pma_password: password, server: '1', route: '/' };
    const landed = await curl(
      Object.entries(form).flatMap(([k, v]) => ['--data-urlencode', `${k}=${v}`]),
      '/index.php?route=/',
    );
    return /<title>([^<]*)<\/title>/.exec(landed.stdout)?.[1] ?? '';
  } finally {
    await runHere('rm', ['-f', jar]);
  }
}

// --- PM2, daemons -----------------------------------------------------------------------------

/**
 * The user's PM2 processes (name → status), read like ensure-pm2-process.ts reads them. Only from a
 * running daemon: `pm2 jlist` would start one, and a check must not undo what deletion stopped.
 */
export async function pm2List(user: string): Promise<Map<string, string>> {
  const home = `/home/${user}`;
  if ((await livePid(`${home}/.pm2/pm2.pid`)) === null) return new Map();
  const result = await run('runuser', ['-u', user, '--', 'env', `HOME=${home}`, `PM2_HOME=${home}/.pm2`, 'pm2', 'jlist']);
  for (const line of result.stdout.split('\n').reverse()) {
    if (!line.startsWith('[') || line.startsWith('[PM2')) continue;
    const list = JSON.parse(line) as { name: string; pm2_env?: { status?: string } }[];
    return new Map(list.map((p) => [p.name, p.pm2_env?.status ?? 'unknown']));
  }
  return new Map();
}

/**
 * Processes of the user whose command line names PM2 (the God daemon), as `pgrep -u <user> -f PM2`
 * sees them. A stopped daemon may show as a zombie until it is reaped, so this waits up to
 * `settleMs` for the list to become empty and returns what is left then.
 */
export async function pm2ProcessesOf(user: string, settleMs = 10_000): Promise<string[]> {
  const until = Date.now() + settleMs;
  for (;;) {
    const found = await run('pgrep', ['-a', '-u', user, '-f', 'PM2']);
    const lines = found.stdout.split('\n').filter((line) => line.trim() !== '');
    if (lines.length === 0 || Date.now() > until) return lines;
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Stops the user's PM2 daemon (which the Node sites' steps started), if it runs. */
export async function pm2Kill(user: string): Promise<void> {
  const home = `/home/${user}`;
  if (pathKind(`${home}/.pm2/pm2.pid`) !== 'file') return;
  await run('runuser', ['-u', user, '--', 'env', `HOME=${home}`, `PM2_HOME=${home}/.pm2`, 'pm2', 'kill']);
}

/** The pid (as the server numbers it) in a daemon's pid file, when that process is alive. */
export async function livePid(pidFile: string): Promise<number | null> {
  const text = await run('sh', ['-c', 'p=$(cat -- "$1") && kill -0 "$p" && echo "$p"', 'sh', pidFile]);
  const pid = Number(text.stdout.trim());
  return text.code === 0 && pid > 1 ? pid : null;
}

export const NGINX_PID_FILE = '/run/nginx.pid';
/** The pid file of the FPM master of the PHP the host's distribution ships. */
export function fpmPidFile(): string {
  return `/run/php/php${hostPhp(server())}-fpm.pid`;
}

/**
 * nginx and php-fpm are started by the sites' own steps (there is no systemd here). Each suite
 * notes whether they ran before it and stops those it caused to start, by the pid in their pid file.
 */
export async function daemonsBefore(): Promise<{ nginx: number | null; fpm: number | null }> {
  return { nginx: await livePid(NGINX_PID_FILE), fpm: await livePid(fpmPidFile()) };
}

export async function stopDaemonsStartedSince(before: { nginx: number | null; fpm: number | null }): Promise<void> {
  for (const [file, was] of [
    [NGINX_PID_FILE, before.nginx],
    [fpmPidFile(), before.fpm],
  ] as const) {
    const pid = await livePid(file);
    if (pid === null || pid === was) continue;
    await run('kill', ['-QUIT', String(pid)]);
    for (let i = 0; i < 50 && (await livePid(file)) === pid; i++) await new Promise((r) => setTimeout(r, 100));
  }
}

/** A TCP port nobody listens on right now on the server (for Generic Port sites). */
export async function freePort(): Promise<number> {
  // /proc/net/tcp{,6} lists sockets with the local port in hex after the address's colon.
  const sockets = (await run('cat', ['/proc/net/tcp', '/proc/net/tcp6'])).stdout;
  const taken = new Set([...sockets.matchAll(/:([0-9A-F]{4}) /g)].map((m) => Number.parseInt(m[1]!, 16)));
  for (let attempt = 0; attempt < 100; attempt++) {
    const port = 20_000 + Math.floor(Math.random() * 20_000);
    if (!taken.has(port)) return port;
  }
  throw new Error('no free port found on the server');
}
