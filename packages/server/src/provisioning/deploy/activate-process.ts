import type { StepContext } from '../step.js';
import { run, StepError } from '../steps/commands.js';
import { asSiteUser, pm2, pm2Lock } from '../steps/pm2.js';
import { checkHealthPath, HEALTH, siteHealth } from './health-check.js';
import { RELEASE_ENTRY } from './launcher.js';
import type { DeployPlan } from './plan.js';
import type { ReleasePaths } from './release-paths.js';
import { switchCurrent } from './switch-current.js';

/** A free TCP port on the server's loopback, as the kernel hands one out (node, as the site user). */
export const FREE_PORT = `const s = require('node:net').createServer();
s.listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); });`;

/**
 * PM2 sites, health-gated: the new release first runs beside the live one, as a temporary
 * process on a free port, and must answer the health path there; until then nothing the visitors
 * reach has changed, so a release that fails leaves the old one serving without a failed request.
 * Then `current` switches and `pm2 reload` replaces the site's cluster workers one by one: PM2
 * starts a worker of the new release, waits until it listens on the site's port (the cluster
 * master holds that socket, so no connection is refused meanwhile), and only then stops the old
 * one. nginx is not touched. A release that answers beside but not in place is switched back.
 */
export async function activateProcess(
  ctx: StepContext,
  paths: ReleasePaths,
  health: DeployPlan['healthCheck'] | null,
): Promise<string | null> {
  const { layout } = paths;
  return ctx.withServerLock(pm2Lock(layout.user), async () => {
    if (health !== null) await tryBeside(ctx, paths, health);
    const previous = await switchCurrent(ctx, layout, paths.linkTarget);
    await reload(ctx, paths);
    if (health !== null) {
      const answer = await siteHealth(ctx, layout, health.path, health.timeoutSeconds);
      if (!answer.ok) {
        if (previous !== null) {
          await switchCurrent(ctx, layout, previous);
          await reload(ctx, paths);
        }
        throw new StepError(
          `health check failed once live: ${health.path} answered ${answer.status}; switched back to ${previous}`,
        );
      }
      ctx.log(`health check: ${health.path} answered ${answer.status} through nginx`);
    }
    // No `pm2 save`: the saved list names `current` and the same script, whichever release is live.
    return previous;
  });
}

/** `pm2 reload` of the site's process: graceful in cluster mode, through `current`. */
export async function reload(ctx: StepContext, paths: ReleasePaths): Promise<void> {
  const started = Date.now();
  await pm2(ctx, paths.layout, ['reload', paths.layout.domain], `reload ${paths.layout.domain}`);
  ctx.log(`reloaded PM2 process ${paths.layout.domain} in ${Date.now() - started} ms (new workers before old ones stop)`);
}

/**
 * BESIDE, as the site user: runs the release's launcher $2 in release $1 on a free loopback port
 * (the kernel's pick, by node: $7), in its own process group, and asks it $3 (HEALTH: $6) for up
 * to $4 s with Host $5. Prints `port N` and `status S`, then on failure the end of the process's
 * output; the process is stopped on exit either way. No PM2 here: each pm2 command costs a Node
 * start, and this process only answers the health check.
 */
export const BESIDE = `set -u
port=$(node -e "$7") || exit 1
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
      'sh',
      '-c',
      BESIDE,
      'sh',
      paths.dir,
      RELEASE_ENTRY,
      checkHealthPath(health.path),
      String(seconds),
      layout.domain,
      HEALTH,
      FREE_PORT,
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
