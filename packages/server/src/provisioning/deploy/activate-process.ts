import type { StepContext } from '../step.js';
import { run, StepError } from '../steps/commands.js';
import { pm2Lock } from '../steps/pm2.js';
import { adoptPm2Process } from './adopt-pm2-process.js';
import { FREE_PORT } from './free-port.js';
import { checkHealthPath, HEALTH, type LiveCheck, liveCheck } from './health-check.js';
import { RELEASE_ENTRY } from './launcher.js';
import type { DeployPlan } from './plan.js';
import { PM2_RELOAD_JS, RELOAD } from './pm2-reload.js';
import { asUserIn, type ReleasePaths } from './release-paths.js';
import { restartBehindStandIn } from './stand-in.js';
import { SWITCH } from './switch-current.js';
import { ensureUserProcessFile, saveForBoot } from './user-process.js';

/**
 * PM2 sites, health-gated: the new release first runs beside the live one, as a temporary
 * process on a free port, and must answer the health path there; until then nothing the visitors
 * reach has changed, so a release that fails leaves the old one serving without a failed request.
 * Then `current` switches and PM2's reload replaces the site's cluster workers one by one: PM2
 * starts a worker of the new release, waits until it listens on the site's port (the cluster
 * master holds that socket, so no connection is refused meanwhile), and only then stops the old
 * one, which finishes the requests it holds before it exits (templates/graceful-stop.ts). nginx is
 * not touched. A release that answers beside but not in place is switched back. The try beside,
 * the switch, the reload and the check through nginx are one round trip (ACTIVATE); a rollback is
 * the same without the checks. Generic Port differs (stand-in.ts): its process is restarted in
 * place, with the release that answered beside kept up as its stand-in in the vhost meanwhile.
 */
export async function activateProcess(
  ctx: StepContext,
  paths: ReleasePaths,
  health: DeployPlan['healthCheck'] | null,
): Promise<string | null> {
  const { layout } = paths;
  return ctx.withServerLock(pm2Lock(layout.user), async () => {
    // Strapi and Directus at their first deployment: the installed instance's process restarted
    // once under the launcher (adopt-pm2-process.ts), before the try beside the live release, so
    // the try, the switch and the reload stay one round trip. A release that then fails its check
    // leaves the installed instance serving, under the launcher.
    await adoptPm2Process(ctx, paths);
    if (ctx.site.type !== 'generic-port') {
      const check = health === null ? null : liveCheck(ctx, layout, health.path, health.timeoutSeconds);
      return activate(ctx, paths, { beside: health, check, startWith: null });
    }
    // Generic Port: its own process, made with the first deploy and restarted in place
    // (user-process.ts) while a stand-in answers for it (stand-in.ts).
    const userProcess = await ensureUserProcessFile(ctx, layout);
    const previous = await restartBehindStandIn(ctx, paths, health, (check, checkMode) =>
      activate(ctx, paths, { beside: null, check, checkMode, startWith: userProcess.ecosystem }),
    );
    if (userProcess.isNew) await saveForBoot(ctx, layout);
    return previous;
  });
}

/**
 * ACTIVATE, as the site user in the site root: when $3 (a release directory) is not empty, BESIDE
 * with $3–$7 and GO_LIVE's health script, its lines printed with `beside ` before them, exit 4 when
 * it fails; then GO_LIVE ($2) with the arguments after $7.
 */
export const ACTIVATE = `set -u
beside=$1 golive=$2 dir=$3 entry=$4 path=$5 secs=$6 host=$7
shift 7
if [ -n "$dir" ]; then
  out=$(bash -c "$beside" beside "$dir" "$entry" "$path" "$secs" "$host" "$7" 2>&1) && rc=0 || rc=$?
  printf '%s\\n' "$out" | sed 's/^/beside /'
  [ "$rc" -eq 0 ] || exit 4
fi
exec bash -c "$golive" go-live "$@"`;

/**
 * GO_LIVE, as the site user in the site root: `current` → $1 (SWITCH: $6), PM2's reload of $2
 * (RELOAD: through the daemon's socket with $8, graceful in cluster mode, through `current`; with
 * START_WITH in the environment, `pm2 startOrReload $START_WITH`, an ecosystem file: Generic Port's
 * process, started the first time, restarted in place after), then when $3 is a URL the check
 * through nginx or, for a process restarted in place, to the site's port directly (HEALTH: $7, at
 * most $4 s, each request at most $5 s, curl options after $8; in CHECK_MODE, live by default). A
 * failing check switches back to the previous release and reloads again (restarted in place, it is
 * waited for). Prints `previous P`, `reloaded MS HOW` for each reload (HOW: daemon, cli or
 * in-place), `status S`, `switched-back`; exits 0 (live), 3 (the check failed), 1 (a command failed:
 * its output follows).
 */
export const GO_LIVE = `set -u
target=$1 name=$2 url=$3 seconds=$4 each=$5 switch=$6 health=$7 reload_js=$8
shift 8
${RELOAD}
if [ -n "\${START_WITH:-}" ]; then
reload() {
  started=$(date +%s%N)
  if ! out=$(pm2 startOrReload "$START_WITH" 2>&1); then echo "pm2 startOrReload failed:"; printf '%s\\n' "$out" | tail -n 20; exit 1; fi
  echo "reloaded $(( ($(date +%s%N) - started) / 1000000 )) in-place"
}
fi
previous=$(sh -c "$switch" sh "$target" 2>&1) || { echo "switching current failed:"; printf '%s\\n' "$previous"; exit 1; }
echo "previous $previous"
reload
[ -n "$url" ] || exit 0
if code=$(sh -c "$health" sh "$url" "$seconds" "$each" "\${CHECK_MODE:-live}" "$@"); then echo "status $code"; exit 0; fi
echo "status $code"
[ -n "$previous" ] || exit 3
out=$(sh -c "$switch" sh "$previous" 2>&1) || { echo "switching back failed:"; printf '%s\\n' "$out"; exit 1; }
echo switched-back
reload
# Restarted in place behind a stand-in: the previous release answers before the stand-in goes.
[ -z "\${START_WITH:-}" ] || sh -c "$health" sh "$url" "$seconds" "$each" any "$@" >/dev/null || :
exit 3`;

/** How a release goes live (ACTIVATE's arguments). */
interface GoLive {
  /** A deploy's health check, asked beside the live release first; null: no try beside. */
  beside: DeployPlan['healthCheck'] | null;
  /** Asked once live; null: none (a rollback of a Node site). */
  check: LiveCheck | null;
  /** HEALTH's mode for `check`: `live` (2xx/3xx) unless told `any` answer. */
  checkMode?: 'live' | 'any';
  /** Generic Port's ecosystem file, restarted in place; null: PM2's graceful reload. */
  startWith: string | null;
}

async function activate(ctx: StepContext, paths: ReleasePaths, how: GoLive): Promise<string | null> {
  const { layout } = paths;
  const { beside: health, check, startWith } = how;
  const options = asUserIn(layout);
  const besideSeconds = health === null ? 0 : Math.max(1, Math.ceil(health.timeoutSeconds));
  const env = {
    ...options.env,
    ...(startWith === null ? {} : { START_WITH: startWith }),
    ...(how.checkMode === undefined ? {} : { CHECK_MODE: how.checkMode }),
  };
  const result = await run(
    ctx,
    [
      'bash',
      '-c',
      ACTIVATE,
      'activate',
      BESIDE,
      GO_LIVE,
      health === null ? '' : paths.dir,
      RELEASE_ENTRY,
      health === null ? '' : checkHealthPath(health.path),
      String(besideSeconds),
      layout.domain,
      paths.linkTarget,
      layout.domain,
      check?.url ?? '',
      String(check?.seconds ?? 0),
      String(check?.each ?? 0),
      SWITCH,
      HEALTH,
      PM2_RELOAD_JS,
      ...(check?.options ?? []),
    ],
    { ...options, env, timeoutMs: (besideSeconds + 20 + 2 * (check?.seconds ?? 0) + 120) * 1000 },
  );
  const all = result.stdout.split('\n');
  if (health !== null) besideOutcome(ctx, paths, health, result.code, all);
  const lines = all.filter((l) => !l.startsWith('beside '));
  const value = (key: string) => lines.find((l) => l.startsWith(`${key} `))?.slice(key.length + 1);
  const previous = value('previous') || null;
  if (previous !== null || lines.some((l) => l.startsWith('previous'))) {
    ctx.log(`current now points to ${paths.linkTarget}${previous ? ` (was ${previous})` : ''}`);
  }
  for (const line of lines.filter((l) => l.startsWith('reloaded '))) {
    const [ms, how] = line.slice(9).split(' ');
    ctx.log(
      how === 'in-place'
        ? `started PM2 process ${layout.domain} in place in ${ms} ms (fork mode: the old process stops first)`
        : `reloaded PM2 process ${layout.domain} in ${ms} ms (new workers before old ones stop; ${how === 'cli' ? "`pm2 reload`: the daemon's socket could not be asked" : "through the daemon's socket"})`,
    );
  }
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
    ctx.log(`health check: ${check.path} answered ${status} ${check.via}`);
  }
  // No `pm2 save`: the saved list names `current` and the same script, whichever release is live.
  return previous;
}

/**
 * BESIDE, as the site user (bash): runs the release's launcher $2 in release $1 on a free loopback
 * port, in its own process group, and asks it $3 (HEALTH: $6) for up to $4 s with Host $5. Prints
 * `port N` and `status S`, then on failure the end of the process's output; the process is stopped
 * on exit either way. The port: FREE_PORT's. No PM2 here: each pm2 command costs a Node start,
 * and this process only answers the health check.
 */
export const BESIDE = `set -u
${FREE_PORT}
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

/** Logs the try beside the live release (lines `beside …`) and throws when it failed (ACTIVATE's exit 4). */
function besideOutcome(
  ctx: StepContext,
  paths: ReleasePaths,
  health: DeployPlan['healthCheck'],
  code: number | null,
  all: string[],
): void {
  const lines = all.filter((l) => l.startsWith('beside ')).map((l) => l.slice(7));
  const port = lines.find((l) => l.startsWith('port '))?.slice(5) ?? '?';
  const status = lines.find((l) => l.startsWith('status '))?.slice(7) || '000';
  if (code === 4) {
    const output = lines.slice(lines.findIndex((l) => l.startsWith('status ')) + 1).filter(Boolean);
    for (const line of output) ctx.log(`  ${line}`);
    throw new StepError(
      `health check failed: ${paths.name} answered ${health.path} with ${status} within ${Math.max(1, Math.ceil(health.timeoutSeconds))} s beside the live release (port ${port}), which keeps serving`,
    );
  }
  if (lines.some((l) => l.startsWith('status ')))
    ctx.log(`health check: ${paths.name} answered ${health.path} with ${status} beside the live release (port ${port})`);
}
