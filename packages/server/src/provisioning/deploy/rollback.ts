import type { Step, StepContext } from '../step.js';
import { StepError } from '../steps/commands.js';
import { pathKind } from '../steps/remote-files.js';
import { activateFiles } from './activate-files.js';
import { activateProcess } from './activate-process.js';
import { MANIFEST_FILE } from './manifest.js';
import type { RollbackPlan } from './plan.js';
import { activationOf, asUserIn, releasePaths } from './release-paths.js';

/** The target must be a whole release a deployment made (its manifest is written last before going live). */
export function checkKeptRelease(plan: RollbackPlan): Step {
  return {
    name: 'check release',
    async run(ctx: StepContext) {
      const paths = releasePaths(ctx.site, plan.release);
      activationOf(ctx.site);
      const kind = await pathKind(ctx, `${paths.dir}/${MANIFEST_FILE}`, asUserIn(paths.layout));
      if (kind !== 'file') throw new StepError(`release ${plan.release} is not kept on the server (no ${MANIFEST_FILE})`);
      ctx.log(`release ${plan.release} is kept`);
    },
  };
}

/**
 * Rollback: `current` back to a kept release and the type's activation again (FPM reload, PM2's
 * graceful reload), nothing rebuilt. No health gate: the release served before.
 */
export function rollbackActivate(plan: RollbackPlan): Step {
  return {
    name: 'activate',
    async run(ctx: StepContext) {
      const paths = releasePaths(ctx.site, plan.release);
      const started = Date.now();
      if (activationOf(ctx.site) === 'process') await activateProcess(ctx, paths, null);
      else await activateFiles(ctx, paths, null);
      ctx.log(`${plan.release} is live again (${Date.now() - started} ms)`);
    },
  };
}
