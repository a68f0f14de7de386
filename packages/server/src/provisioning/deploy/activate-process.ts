import type { StepContext } from '../step.js';
import { run, StepError } from '../steps/commands.js';
import { asSiteUser, pm2Lock } from '../steps/pm2.js';
import { adoptPm2Process } from './adopt-pm2-process.js';
import { checkHealthPath, HEALTH, liveCheck } from './health-check.js';
import { RELEASE_ENTRY } from './launcher.js';
import type { DeployPlan } from './plan.js';
import { asUserIn, type ReleasePaths } from './release-paths.js';
import { SWITCH } from './switch-current.js';

/**
 * PM2 sites, health-gated: the new release first runs beside the live one, as a temporary
 * process on a free port, and must answer the health path there; until then nothing the visitors
 * reach has changed, so a release that fails leaves the old one serving without a failed request.
 * Then `current` switches and `pm2 reload` replaces the site's cluster workers one by one: PM2
 * starts a worker of the new release, waits until it listens on the site's port (the cluster
 * master holds that socket, so no connection is refused meanwhile), and only then stops the old
 * one, which finishes the requests it holds before it exits (templates/graceful-stop.ts). nginx is
 * not touched. A release that answers beside but not in place is switched back. Switch, reload
 * and the check through nginx are one round trip (GO_LIVE); a rollback is the same without the checks.
 */
export async function activateProcess(
  ctx: StepContext,
  paths: ReleasePaths,
  health: DeployPlan['healthCheck'] | null,
): Promise<string | null> {
  const { layout } = paths;
  return ctx.withServerLock(pm2Lock(layout.user), async () => {
    if (health !== null) await tryBeside(ctx, paths, health);
    await adoptPm2Process(ctx, paths);
    return goLive(ctx, paths, health);
  });
}

/**
 * GO_LIVE, as the site user in the site root, in one round trip: `current` → $1 (SWITCH: $6),
 * `pm2 reload $2` (graceful in cluster mode, through `current`), then when $3 is a URL the check
 * through nginx (HEALTH: $7, at most $4 s, each request at most $5 s, curl options after $7). A
 * failing check switches back to the previous release and reloads again. Prints `previous P`,
 * `reloaded MS` for each reload, `status S`, `switched-back`; exits 0 (live), 3 (the check failed),
 * 1 (a command failed: its output follows).
 */
export const GO_LIVE = `set -u
target=$1 name=$2 url=$3 seconds=$4 each=$5 switch=$6 health=$7
shift 7
reload() {
  started=$(date +%s%N)
  if ! out=$(pm2 reload "$name" 2>&1); then echo "pm2 reload $name failed:"; printf '%s\\n' "$out" | tail -n 20; exit 1; fi
  echo "reloaded $(( ($(date +%s%N) - started) / 1000000 ))"
}
previous=$(sh -c "$switch" sh "$target" 2>&1) || { echo "switching current failed:"; printf '%s\\n' "$previous"; exit 1; }
echo "previous $previous"
reload
[ -n "$url" ] || exit 0
if code=$(sh -c "$health" sh "$url" "$seconds" "$each" live "$@"); then echo "status $code"; exit 0; fi
echo "status $code"
[ -n "$previous" ] || exit 3
out=$(sh -c "$switch" sh "$previous" 2>&1) || { echo "switching back failed:"; printf '%s\\n' "$out"; exit 1; }
echo switched-back
reload
exit 3`;

async function goLive(ctx: StepContext, paths: ReleasePaths, health: DeployPlan['healthCheck'] | null): Promise<string | null> {
  const { layout } = paths;
  const check = health === null ? null : liveCheck(ctx, layout, health.path, health.timeoutSeconds);
  const result = await run(
    ctx,
    [
      'bash',
      '-c',
      GO_LIVE,
      'go-live',
      paths.linkTarget,
      layout.domain,
      check?.url ?? '',
      String(check?.seconds ?? 0),
      String(check?.each ?? 0),
      SWITCH,
      HEALTH,
      ...(check?.options ?? []),
    ],
    { ...asUserIn(layout), timeoutMs: ((check?.seconds ?? 0) + 120) * 1000 },
  );
  const lines = result.stdout.split('\n');
  const value = (key: string) => lines.find((l) => l.startsWith(`${key} `))?.slice(key.length + 1);
  const previous = value('previous') || null;
  if (previous !== null || lines.some((l) => l.startsWith('previous'))) {
    ctx.log(`current now points to ${paths.linkTarget}${previous ? ` (was ${previous})` : ''}`);
  }
  for (const line of lines.filter((l) => l.startsWith('reloaded ')))
    ctx.log(`reloaded PM2 process ${layout.domain} in ${line.slice(9)} ms (new workers before old ones stop)`);
  if (result.code === 1 || (result.code !== 0 && result.code !== 3)) {
    const output = [...lines.filter((l) => !/^(previous|reloaded|status) /.test(l)), result.stderr].join('\n').trim();
    throw new StepError(`making ${paths.name} live failed (exit ${result.code}): ${output}`);
  }
  if (check !== null) {
    const status = value('status') || '000';
    if (result.code === 3) {
      throw new StepError(
        `health check failed once live: ${check.path} answered ${status}; ${previous !== null && lines.includes('switched-back') ? `switched back to ${previous}` : 'no release to switch back to'}`,
      );
    }
    ctx.log(`health check: ${check.path} answered ${status} through nginx`);
  }
  // No `pm2 save`: the saved list names `current` and the same script, whichever release is live.
  return previous;
}

/**
 * BESIDE, as the site user (bash): runs the release's launcher $2 in release $1 on a free loopback
 * port, in its own process group, and asks it $3 (HEALTH: $6) for up to $4 s with Host $5. Prints
 * `port N` and `status S`, then on failure the end of the process's output; the process is stopped
 * on exit either way. The port: one in the kernel's ephemeral range that no TCP socket uses, not
 * even an outgoing connection's end (the kernel's own list, /proc/net/tcp and tcp6), picked without
 * the cost of starting Node to ask the kernel. No PM2 here: each pm2 command costs a Node start,
 * and this process only answers the health check.
 */
export const BESIDE = `set -u
port= sockets=/proc/net/tcp
[ -r /proc/net/tcp6 ] && sockets="$sockets /proc/net/tcp6"
for _ in $(seq 1 50); do
  candidate=$(( 32768 + RANDOM % 28000 ))
  if ! awk -v p="$(printf ':%04X' "$candidate")" '$2 ~ p "$" { used = 1 } END { exit !used }' $sockets; then
    port=$candidate; break
  fi
done
[ -n "$port" ] || { echo "no free port"; exit 1; }
out=$(mktemp) || exit 1
cd -- "$1" || exit 1
PORT=$port NODE_ENV=production setsid node -- "$2" >"$out" 2>&1 </dev/null &
pid=$!
trap 'kill -TERM "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null; rm -f -- "$out"' EXIT
echo "port $port"
each=$4; [ "$each" -le 10 ] || each=10
if code=$(sh -c "$6" sh "http://127.0.0.1:$port$3" "$4" "$each" beside -H "Host: $5"); then echo "status $code"; exit 0; fi
echo "status $code"
tail -n 20 -- "$out"
exit 1`;

async function tryBeside(ctx: StepContext, paths: ReleasePaths, health: DeployPlan['healthCheck']): Promise<void> {
  const { layout } = paths;
  const seconds = Math.max(1, Math.ceil(health.timeoutSeconds));
  const result = await run(
    ctx,
    [
      'bash',
      '-c',
      BESIDE,
      'beside',
      paths.dir,
      RELEASE_ENTRY,
      checkHealthPath(health.path),
      String(seconds),
      layout.domain,
      HEALTH,
    ],
    { ...asSiteUser(layout, paths.dir), timeoutMs: (seconds + 20) * 1000 },
  );
  const lines = result.stdout.split('\n');
  const port = lines.find((l) => l.startsWith('port '))?.slice(5) ?? '?';
  const status = lines.find((l) => l.startsWith('status '))?.slice(7) || '000';
  if (result.code !== 0) {
    const output = lines.slice(lines.findIndex((l) => l.startsWith('status ')) + 1).filter(Boolean);
    for (const line of output) ctx.log(`  ${line}`);
    throw new StepError(
      `health check failed: ${paths.name} answered ${health.path} with ${status} within ${seconds} s beside the live release (port ${port}), which keeps serving`,
    );
  }
  ctx.log(`health check: ${paths.name} answered ${health.path} with ${status} beside the live release (port ${port})`);
}
