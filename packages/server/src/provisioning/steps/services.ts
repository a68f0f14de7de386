import type { CommandResult, RunOptions } from '../executor.js';
import type { StepContext } from '../step.js';
import { AS_ROOT, mustRun, run } from './commands.js';
import { pathKind, readFile } from './remote-files.js';
import type { FpmPoolLayout } from './site-layout.js';

/**
 * Starting and reloading services on servers with systemd and without it (containers, this
 * project's test machines: nginx started by `nginx`, php-fpm by `php-fpmX.Y`, signals to reload).
 */
export function hasSystemd(ctx: StepContext): Promise<boolean> {
  // Asked once per executor (a job's connection): whether systemd is PID 1 does not change during a
  // job, and every reload would otherwise pay a round trip for it.
  let answer = systemdAnswers.get(ctx.exec);
  if (!answer) {
    // The directory exists only while systemd is PID 1; an installed but unused systemctl is no proof.
    answer = pathKind(ctx, '/run/systemd/system').then((kind) => kind === 'directory');
    answer.catch(() => systemdAnswers.delete(ctx.exec));
    systemdAnswers.set(ctx.exec, answer);
  }
  return answer;
}

const systemdAnswers = new WeakMap<StepContext['exec'], Promise<boolean>>();

/** nginx's configuration test, as config files run it (config-file.ts) and on its own. */
export const NGINX_TEST = ['nginx', '-t', '-q'] as const;

export function testNginx(ctx: StepContext): Promise<CommandResult> {
  return run(ctx, NGINX_TEST, AS_ROOT);
}

/** Debian's nginx.conf writes its master's pid here. */
export const NGINX_PID_FILE = '/run/nginx.pid';

/**
 * Reloads nginx gracefully, or starts it when it is not running; returns once the new
 * configuration is what answers. `nginx -s reload` (and systemd's reload, which runs it) only
 * signals the master: for some milliseconds its old workers keep accepting with the old
 * configuration, so a site reported installed at once would answer its first request with the
 * default page. So the script notes the workers before, reloads, and waits for them to let go —
 * all in one round trip (RELOAD_NGINX).
 */
export async function reloadNginx(ctx: StepContext): Promise<void> {
  const result = await mustRun(ctx, ['sh', '-c', RELOAD_NGINX], AS_ROOT, 'reload nginx');
  reportNginxReload(ctx, result.stdout);
}

/** Logs what RELOAD_NGINX says it did (it also ends config-file.ts's script for vhosts). */
export function reportNginxReload(ctx: StepContext, stdout: string): void {
  const said = stdout.split('\n');
  if (said.includes('started')) ctx.log('started nginx (it was not running)');
  else ctx.log(said.includes('systemd') ? 'reloaded nginx (systemd)' : 'reloaded nginx');
  if (said.includes('still-accepting')) ctx.log('nginx’s previous workers still accept connections 5 s after the reload');
}

/**
 * Takes no arguments, so it can end another script (config-file.ts). The master's children before
 * the reload (none when nginx does not run or the kernel does not list children); systemd's reload when systemd is PID 1 (the directory exists
 * only then: an installed but unused systemctl is no proof), else the signal, else a start (no or
 * a stale pid file). Then up to 5 s, looking every 10 ms (they usually let go within a few ms),
 * until none of the old workers accepts any more: each has exited or calls itself "worker process
 * is shutting down", which an old worker does once it closed its listening sockets — by then the
 * master has started the new workers. Prints what it did.
 */
export const RELOAD_NGINX = `m=$(cat -- ${NGINX_PID_FILE} 2>/dev/null) old=
case $m in ''|0*|*[!0-9]*) ;; *) old=$(cat "/proc/$m/task/$m/children" 2>/dev/null) ;; esac
if [ -d /run/systemd/system ]; then
  systemctl reload-or-restart nginx || exit
  echo systemd
elif ! nginx -s reload 2>/dev/null; then
  nginx || exit
  echo started
  exit 0
fi
set -f
set -- $old
i=0
while [ "$#" -gt 0 ] && [ "$i" -lt 500 ]; do
  accepting=no
  for p in "$@"; do
    { t=$(tr '\\0' ' ' < "/proc/$p/cmdline"); } 2>/dev/null || continue
    case "$t" in *"is shutting down"*) ;; *"worker process"*) accepting=yes ;; esac
  done
  [ "$accepting" = no ] && exit 0
  i=$((i + 1))
  sleep 0.01
done
[ "$#" -eq 0 ] || echo still-accepting`;

export function phpFpmTest(pool: Pick<FpmPoolLayout, 'binary' | 'mainConfig'>): string[] {
  return [pool.binary, '-t', '--fpm-config', pool.mainConfig];
}

export function testPhpFpm(ctx: StepContext, pool: Pick<FpmPoolLayout, 'binary' | 'mainConfig'>): Promise<CommandResult> {
  return run(ctx, phpFpmTest(pool), AS_ROOT);
}

/**
 * The pid in a daemon's pid file when that process is alive (no procps needed). A pid file in a
 * user's tree (their PM2 daemon's) is read, and its process asked, as that user (`options`).
 */
export async function livePid(ctx: StepContext, pidFile: string, options: RunOptions = AS_ROOT): Promise<string | null> {
  const content = (await readFile(ctx, pidFile, options))?.trim() ?? '';
  if (!/^[1-9]\d*$/.test(content)) return null;
  const alive = await run(ctx, ['kill', '-0', content], options);
  return alive.code === 0 ? content : null;
}

/**
 * Reloads php-fpm of this version (USR2: graceful, re-reads pools), or starts it: one round trip.
 * Under the server's `php-fpm:<version>` lock: the pools of two users are made under two pool
 * locks, and without this one both first sites found no master and both started one — the second
 * failed ("Another FPM instance seems to already listen on" the first one's socket).
 */
export async function reloadPhpFpm(ctx: StepContext, pool: FpmPoolLayout): Promise<void> {
  const unit = `php${pool.version}-fpm`;
  const argv = ['sh', '-c', RELOAD_PHP_FPM, 'sh', unit, pool.pidFile, pool.binary, pool.mainConfig];
  const said = (
    await ctx.withServerLock(`php-fpm:${pool.version}`, () => mustRun(ctx, argv, AS_ROOT, `reload ${unit}`))
  ).stdout.trim();
  if (said === 'systemd') ctx.log(`reloaded ${unit} (systemd)`);
  else if (said.startsWith('signalled ')) ctx.log(`reloaded ${unit} (signalled master ${said.slice('signalled '.length)})`);
  else ctx.log(`started ${unit} (it was not running)`);
}

/**
 * $1 the unit, $2 the master's pid file, $3 the php-fpm binary, $4 its main configuration. systemd
 * when it is PID 1; else USR2 to a live master; else a start — after creating /run/php, which
 * without systemd nothing creates (the unit's RuntimeDirectory would). Prints what it did.
 */
export const RELOAD_PHP_FPM = `if [ -d /run/systemd/system ]; then systemctl reload-or-restart "$1" || exit; echo systemd; exit 0; fi
m=$(cat -- "$2" 2>/dev/null)
case $m in ''|0*|*[!0-9]*) ;; *) if kill -0 "$m" 2>/dev/null; then kill -USR2 "$m" || exit; echo "signalled $m"; exit 0; fi ;; esac
install -d -m 0755 /run/php && "$3" --fpm-config "$4" || exit
echo started`;

/**
 * Starts a packaged daemon (database engines): systemd unit when systemd runs, else the package's
 * init script, which Debian's mariadb, mysql and postgresql packages still ship.
 */
export async function startService(ctx: StepContext, unit: string, initScript: string): Promise<void> {
  if (await hasSystemd(ctx)) await mustRun(ctx, ['systemctl', 'start', unit], AS_ROOT, `start ${unit}`);
  // A missing script fails as "not found" (exit 127), which the error then says.
  else await mustRun(ctx, [initScript, 'start'], AS_ROOT, `start ${unit} with ${initScript} (no systemd)`);
  ctx.log(`started ${unit}`);
}
