import type { CommandResult } from '../executor.js';
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

export function testNginx(ctx: StepContext): Promise<CommandResult> {
  return run(ctx, ['nginx', '-t', '-q'], AS_ROOT);
}

/**
 * Reloads nginx gracefully, or starts it when it is not running; returns once the new
 * configuration is what answers. `nginx -s reload` (and systemd's reload, which runs it) only
 * signals the master: for some milliseconds its old workers keep accepting with the old
 * configuration, so a site reported installed at once would answer its first request with the
 * default page. Two more round trips: the workers before, and the wait for them to let go.
 */
export async function reloadNginx(ctx: StepContext): Promise<void> {
  const before = await nginxWorkers(ctx);
  if (await hasSystemd(ctx)) {
    await mustRun(ctx, ['systemctl', 'reload-or-restart', 'nginx'], AS_ROOT, 'reload nginx');
    ctx.log('reloaded nginx (systemd)');
  } else {
    // `nginx -s reload` fails when no master runs (no or stale pid file): then start one.
    const reload = await run(ctx, ['nginx', '-s', 'reload'], AS_ROOT);
    if (reload.code !== 0) {
      await mustRun(ctx, ['nginx'], AS_ROOT, 'start nginx');
      ctx.log('started nginx (it was not running)');
      return;
    }
    ctx.log('reloaded nginx');
  }
  if (before.length === 0) return;
  const waited = await run(ctx, ['sh', '-c', WAIT_FOR_OLD_WORKERS, 'sh', NGINX_PID_FILE, ...before], AS_ROOT);
  if (waited.code !== 0) ctx.log('nginx’s previous workers still accept connections 5 s after the reload');
}

/** The master's children now; none when nginx does not run or the kernel does not list children. */
async function nginxWorkers(ctx: StepContext): Promise<string[]> {
  const listed = await run(ctx, ['sh', '-c', NGINX_CHILDREN, 'sh', NGINX_PID_FILE], AS_ROOT);
  return listed.code === 0 ? listed.stdout.split(/\s+/).filter((pid) => /^[1-9]\d*$/.test(pid)) : [];
}

const NGINX_CHILDREN = 'm=$(cat "$1" 2>/dev/null) && cat "/proc/$m/task/$m/children" 2>/dev/null; exit 0';

/**
 * Waits (up to 5 s) until none of the given workers accepts any more: each has exited or calls
 * itself "worker process is shutting down", which an old worker does once it closed its listening
 * sockets — by then the master has started the new workers. $1 the pid file, then the old pids.
 */
const WAIT_FOR_OLD_WORKERS = `shift
i=0
while [ "$i" -lt 100 ]; do
  accepting=no
  for p in "$@"; do
    { t=$(tr '\\0' ' ' < "/proc/$p/cmdline"); } 2>/dev/null || continue
    case "$t" in *"is shutting down"*) ;; *"worker process"*) accepting=yes ;; esac
  done
  [ "$accepting" = no ] && exit 0
  i=$((i + 1))
  sleep 0.05
done
exit 1`;

export function testPhpFpm(ctx: StepContext, pool: Pick<FpmPoolLayout, 'binary' | 'mainConfig'>): Promise<CommandResult> {
  return run(ctx, [pool.binary, '-t', '--fpm-config', pool.mainConfig], AS_ROOT);
}

/** The pid in a daemon's pid file when that process is alive (no procps needed). */
export async function livePid(ctx: StepContext, pidFile: string): Promise<string | null> {
  const content = (await readFile(ctx, pidFile))?.trim() ?? '';
  if (!/^[1-9]\d*$/.test(content)) return null;
  const alive = await run(ctx, ['kill', '-0', content], AS_ROOT);
  return alive.code === 0 ? content : null;
}

/** Debian's nginx.conf writes its master's pid here. */
export const NGINX_PID_FILE = '/run/nginx.pid';

/** Reloads php-fpm of this version (USR2: graceful, re-reads pools), or starts it. */
export async function reloadPhpFpm(ctx: StepContext, pool: FpmPoolLayout): Promise<void> {
  const unit = `php${pool.version}-fpm`;
  if (await hasSystemd(ctx)) {
    await mustRun(ctx, ['systemctl', 'reload-or-restart', unit], AS_ROOT, `reload ${unit}`);
    ctx.log(`reloaded ${unit} (systemd)`);
    return;
  }
  const pid = await livePid(ctx, pool.pidFile);
  if (pid) {
    await mustRun(ctx, ['kill', '-USR2', pid], AS_ROOT, `reload ${unit}`);
    ctx.log(`reloaded ${unit} (signalled master ${pid})`);
    return;
  }
  // Without systemd nothing creates /run/php (the unit's RuntimeDirectory would).
  await mustRun(ctx, ['install', '-d', '-m', '0755', '/run/php'], AS_ROOT, 'create /run/php');
  await mustRun(ctx, [pool.binary, '--fpm-config', pool.mainConfig], AS_ROOT, `start ${unit}`);
  ctx.log(`started ${unit} (it was not running)`);
}

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
