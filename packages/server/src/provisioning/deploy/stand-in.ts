import type { StepContext } from '../step.js';
import { run, StepError } from '../steps/commands.js';
import { ensureNginxVhost } from '../steps/ensure-nginx-vhost.js';
import type { SiteLayout } from '../steps/site-layout.js';
import { FREE_PORT, TCP_SOCKETS } from './free-port.js';
import { checkHealthPath, HEALTH, type LiveCheck, processCheck } from './health-check.js';
import { RELEASE_ENTRY } from './launcher.js';
import type { DeployPlan } from './plan.js';
import { vhostOnServer } from './refresh-vhost.js';
import { asUserIn, type ReleasePaths } from './release-paths.js';

/**
 * Generic Port without a gap. Its process cannot hand its port to the next release's, as PM2's
 * cluster mode does for Node sites (the user's command need not be Node), so PM2 restarts it in
 * place, and for the second or so that takes nginx answered 502. Instead:
 * 1. the release starts beside the live one on a free port, its health check there as for every
 *    PM2 site, and keeps running: the stand-in (a failing one is stopped; nothing has changed);
 * 2. the vhost names the stand-in as a backup of the site's port (nginx reloads gracefully);
 * 3. `current` switches and PM2 restarts the site's process in place: what the site's port
 *    refuses meanwhile, or what the stopping process drops before answering, nginx sends to the
 *    stand-in, which runs the same release; the restarted process is asked on the site's port;
 * 4. the vhost loses the backup, and the stand-in stops once nginx's requests to it are answered.
 * A rollback does the same with the release it returns to, asked for any answer on `/` (it served
 * before; its health path is not known here). A deploy stopped in between leaves at most a stand-in
 * that ends itself (`timeout`) and a backup in the vhost that the next deploy removes.
 */
export async function restartBehindStandIn(
  ctx: StepContext,
  paths: ReleasePaths,
  health: DeployPlan['healthCheck'] | null,
  goLive: (check: LiveCheck, mode: 'live' | 'any') => Promise<string | null>,
): Promise<string | null> {
  const { layout } = paths;
  const asked = health ?? { path: '/', timeoutSeconds: 30 };
  const mode = health === null ? 'any' : 'live';
  const direct = processCheck(ctx, layout, asked.path, asked.timeoutSeconds);
  // Whatever this deploy does after, its stand-in ends by itself within its longest possible use.
  const lifetime = 2 * direct.seconds + 300;
  const standIn = await startStandIn(ctx, paths, asked.path, direct.seconds, mode, lifetime);
  if (standIn === null) return goLive(direct, mode);
  let routed = false;
  let live: { previous: string | null } | { error: unknown };
  try {
    routed = await routeTo(ctx, standIn.port);
    if (!routed) ctx.log('nginx could not be given the stand-in: the process restarts in place without one');
    live = { previous: await goLive(direct, mode) };
  } catch (error) {
    live = { error };
  }
  // The backup goes before the stand-in does: a refused request must not find another process on its port.
  let unrouted = !routed;
  try {
    unrouted ||= await routeTo(ctx, undefined);
  } finally {
    await stopStandIn(ctx, layout, standIn.port);
  }
  if ('error' in live) throw live.error;
  if (!unrouted)
    throw new StepError(
      `the vhost still names the stand-in's port ${standIn.port} as a backup: nginx refused the vhost without it`,
    );
  return live.previous;
}

/** The file naming the stand-in's process group, in the site root (the site user's). */
function pidFile(layout: SiteLayout): string {
  return `${layout.root}/.siteplane-stand-in.pid`;
}

/**
 * STAND_IN_PID, a shell function for both scripts below ($pidfile and $entry set): prints the pid
 * $pidfile names when that process is a stand-in (its command line is ours: `timeout … node --
 * $entry`), so a pid file the site user rewrote, or an old pid taken by another process, is not
 * obeyed; removes $pidfile either way.
 */
const STAND_IN_PID = `stand_in_pid() {
  p=$(cat -- "$pidfile" 2>/dev/null) || return 1
  rm -f -- "$pidfile"
  case $p in ''|0*|*[!0-9]*) return 1 ;; esac
  case $(tr '\\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) in
    "timeout -k 10 "*" node -- $entry "*) echo "$p" ;;
    *) return 1 ;;
  esac
}`;

/**
 * STAND_IN, as the site user in the site root (bash): stops a stand-in an interrupted deploy left
 * ($8 names it: STAND_IN_PID), then runs the
 * release's launcher $2 in release $1 on a free port, in a session of its own under `timeout $9`,
 * and asks it $3 (HEALTH: $6, mode $7) for up to $4 s with Host $5. Prints `port N`, `status S`
 * and, when it answered, `pid P` (kept running, P written to $8); otherwise the end of its output
 * (exit 4, the process stopped).
 */
export const STAND_IN = `set -u
dir=$1 entry=$2 path=$3 secs=$4 host=$5 health=$6 mode=$7 pidfile=$8 lifetime=$9
${STAND_IN_PID}
if old=$(stand_in_pid); then kill -TERM "-$old" 2>/dev/null && echo "stopped an earlier stand-in ($old)"; fi
${FREE_PORT}
out=$(mktemp) || exit 1
cd -- "$dir" || exit 1
PORT=$port NODE_ENV=production setsid timeout -k 10 "$lifetime" node -- "$entry" >"$out" 2>&1 </dev/null &
pid=$!
echo "port $port"
each=$secs; [ "$each" -le 10 ] || each=10
if code=$(sh -c "$health" sh "http://127.0.0.1:$port$path" "$secs" "$each" "$mode" -H "Host: $host"); then
  echo "$pid" >"$pidfile"
  rm -f -- "$out"
  echo "status $code"
  echo "pid $pid"
  exit 0
fi
kill -TERM "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null
echo "status $code"
tail -n 20 -- "$out"
rm -f -- "$out"
exit 4`;

async function startStandIn(
  ctx: StepContext,
  paths: ReleasePaths,
  path: string,
  seconds: number,
  mode: 'live' | 'any',
  lifetime: number,
): Promise<{ port: number } | null> {
  const { layout } = paths;
  const result = await run(
    ctx,
    [
      'bash',
      '-c',
      STAND_IN,
      'stand-in',
      paths.dir,
      RELEASE_ENTRY,
      checkHealthPath(path),
      String(seconds),
      layout.domain,
      HEALTH,
      mode === 'live' ? 'beside' : 'any',
      pidFile(layout),
      String(lifetime),
    ],
    { ...asUserIn(layout), timeoutMs: (seconds + 30) * 1000 },
  );
  const lines = result.stdout.split('\n');
  for (const line of lines.filter((l) => l.startsWith('stopped an earlier stand-in'))) ctx.log(line);
  const port = lines.find((l) => l.startsWith('port '))?.slice(5) ?? '?';
  const status = lines.find((l) => l.startsWith('status '))?.slice(7) || '000';
  if (result.code === 0 && /^\d+$/.test(port)) {
    ctx.log(
      `health check: ${paths.name} answered ${path} with ${status} beside the live release (port ${port}), kept as its stand-in`,
    );
    return { port: Number(port) };
  }
  const output = lines.slice(lines.findIndex((l) => l.startsWith('status ')) + 1).filter(Boolean);
  if (mode === 'any') {
    // A rollback: the release it returns to served before; without a stand-in it restarts in place.
    ctx.log(`${paths.name} gave no answer beside the live release (port ${port}): restarting in place without a stand-in`);
    return null;
  }
  for (const line of output) ctx.log(`  ${line}`);
  if (result.code !== 4)
    throw new StepError(
      `starting ${paths.name} beside the live release failed (exit ${result.code}): ${[...lines, result.stderr].join('\n').trim()}`,
    );
  throw new StepError(
    `health check failed: ${paths.name} answered ${path} with ${status} within ${seconds} s beside the live release (port ${port}), which keeps serving`,
  );
}

/** The vhost with the stand-in's port as a backup, or without (undefined); false when nginx refused it. */
async function routeTo(ctx: StepContext, standIn: number | undefined): Promise<boolean> {
  const vhost = await vhostOnServer(ctx);
  if (vhost === null) return false;
  try {
    await ensureNginxVhost({ ...vhost.options, ...(standIn === undefined ? {} : { standIn }) }).run(ctx);
    return true;
  } catch (error) {
    if (!(error instanceof StepError)) throw error;
    ctx.log(error.message);
    return false;
  }
}

/**
 * STOP_STAND_IN, as the site user (bash): waits (at most 10 s) until no connection to port $1 is
 * open — nginx's workers from before the reload finish what they sent there — then stops the process
 * group $2 names (STAND_IN_PID, launcher $3) and removes $2.
 */
export const STOP_STAND_IN = `set -u
port=$1 pidfile=$2 entry=$3
${TCP_SOCKETS}
hex=$(printf ':%04X' "$port")
for _ in $(seq 1 100); do
  awk -v p="$hex" '$2 ~ p "$" && $4 == "01" { busy = 1 } END { exit !busy }' $sockets || break
  sleep 0.1
done
${STAND_IN_PID}
if pid=$(stand_in_pid); then kill -TERM "-$pid" 2>/dev/null && echo "stopped"; else echo "no stand-in"; fi`;

async function stopStandIn(ctx: StepContext, layout: SiteLayout, port: number): Promise<void> {
  const result = await run(ctx, ['bash', '-c', STOP_STAND_IN, 'stop-stand-in', String(port), pidFile(layout), RELEASE_ENTRY], {
    ...asUserIn(layout),
    timeoutMs: 30_000,
  });
  if (result.code !== 0)
    ctx.log(`stopping the stand-in on port ${port} failed (it ends by itself): ${result.stdout}${result.stderr}`.trim());
  else if (result.stdout.includes('stopped')) ctx.log(`the stand-in on port ${port} stopped`);
}
