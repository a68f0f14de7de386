import type { StepContext } from '../step.js';
import { mustRun, run, StepError } from '../steps/commands.js';
import { asSiteUser, pm2, pm2Lock } from '../steps/pm2.js';
import { portHealth, siteHealth } from './health-check.js';
import { RELEASE_ENTRY } from './launcher.js';
import type { DeployPlan } from './plan.js';
import type { ReleasePaths } from './release-paths.js';
import { switchCurrent } from './switch-current.js';

/** A free TCP port on the server's loopback, as the kernel hands one out (node, as the site user). */
export const FREE_PORT = `const s = require('node:net').createServer();
s.listen(0, '127.0.0.1', () => { console.log(s.address().port); s.close(); });`;

/**
 * PM2 sites, health-gated: the new release first runs beside the live one, as a temporary PM2
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

async function tryBeside(ctx: StepContext, paths: ReleasePaths, health: DeployPlan['healthCheck']): Promise<void> {
  const { layout } = paths;
  const name = `${layout.domain}~next`;
  const user = asSiteUser(layout);
  // A leftover of an attempt that died here: the name must be free.
  await run(ctx, ['pm2', 'delete', name], user);
  const port = Number((await mustRun(ctx, ['node', '-e', FREE_PORT], user, 'find a free port')).stdout.trim());
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new StepError('could not find a free port for the new release');
  await mustRun(
    ctx,
    ['pm2', 'start', `${paths.dir}/${RELEASE_ENTRY}`, '--name', name, '--cwd', paths.dir, '--no-autorestart'],
    { ...user, env: { ...user.env, PORT: String(port), NODE_ENV: 'production' } },
    `start ${paths.name} beside the live release`,
  );
  ctx.log(`started ${paths.name} as ${name} on 127.0.0.1:${port}`);
  let answer: Awaited<ReturnType<typeof portHealth>>;
  try {
    answer = await portHealth(ctx, layout, port, health.path, health.timeoutSeconds);
  } finally {
    await run(ctx, ['pm2', 'delete', name], user);
  }
  if (!answer.ok) {
    throw new StepError(
      `health check failed: ${paths.name} answered ${health.path} with ${answer.status} within ${health.timeoutSeconds} s beside the live release, which keeps serving`,
    );
  }
  ctx.log(`health check: ${paths.name} answered ${health.path} with ${answer.status} beside the live release`);
}
