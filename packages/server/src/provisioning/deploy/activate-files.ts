import type { StepContext } from '../step.js';
import { StepError } from '../steps/commands.js';
import { reloadPhpFpm } from '../steps/services.js';
import { fpmPoolLayout, requirePhpVersion } from '../steps/site-layout.js';
import { checkBeforeSwitch } from './check-before-switch.js';
import { siteHealth } from './health-check.js';
import type { DeployPlan } from './plan.js';
import type { ReleasePaths } from './release-paths.js';
import { switchCurrent } from './switch-current.js';

/**
 * Static and PHP sites: nginx serves `current` ($realpath_root), so the switch is the activation;
 * PHP-FPM is reloaded (graceful, USR2) so no worker keeps a cached path of the old release. The
 * release is asked for its health path before the switch (check-before-switch.ts): one that fails
 * there never goes live. After the switch the site is asked through nginx; a failing answer
 * switches back to the previous release (and reloads FPM again) before the step fails.
 */
export async function activateFiles(
  ctx: StepContext,
  paths: ReleasePaths,
  health: DeployPlan['healthCheck'] | null,
): Promise<string | null> {
  const { layout, linkTarget: target } = paths;
  if (health !== null) {
    const before = await checkBeforeSwitch(ctx, paths, health);
    if (!before.ok) {
      throw new StepError(
        `health check failed: ${before.said}; ${paths.name} was not switched to and the live release keeps serving`,
      );
    }
    ctx.log(`health check: ${before.said}`);
  }
  const previous = await switchCurrent(ctx, layout, target);
  await reloadPhpIfAny(ctx);
  if (health === null) return previous;
  const answer = await siteHealth(ctx, layout, health.path, health.timeoutSeconds);
  if (answer.ok) {
    ctx.log(`health check: ${health.path} answered ${answer.status}`);
    return previous;
  }
  if (previous !== null) {
    await switchCurrent(ctx, layout, previous);
    await reloadPhpIfAny(ctx);
  }
  throw new StepError(
    `health check failed: ${health.path} answered ${answer.status} within ${health.timeoutSeconds} s; ${
      previous === null ? 'there was no release to return to' : `switched back to ${previous}`
    }`,
  );
}

async function reloadPhpIfAny(ctx: StepContext): Promise<void> {
  if (ctx.site.runtime.php === undefined) return;
  await reloadPhpFpm(ctx, fpmPoolLayout(ctx.site.user, requirePhpVersion(ctx.site.runtime.php.version)));
}
