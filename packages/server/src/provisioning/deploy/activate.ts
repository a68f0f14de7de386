import type { Step, StepContext } from '../step.js';
import { activateFiles } from './activate-files.js';
import { activateProcess } from './activate-process.js';
import type { DeployPlan } from './plan.js';
import { refreshVhost } from './refresh-vhost.js';
import { activationOf, releasePaths } from './release-paths.js';
import { checkServedOutput } from './served-output.js';
import type { DeployState } from './state.js';

/**
 * Makes plan.release live the type's way (activate-files.ts, activate-process.ts). It runs only
 * after every step before it succeeded (the job stops at the first failure), and once started it
 * is not cut short by a cancel: a half-made switch is what must never happen.
 */
export function activateRelease(plan: DeployPlan, state: DeployState): Step {
  return {
    name: 'activate',
    async run(ctx: StepContext) {
      const paths = releasePaths(ctx.site, plan.release);
      const started = Date.now();
      const byProcess = activationOf(ctx.site) === 'process';
      if (!byProcess) await checkServedOutput(ctx, paths, plan);
      // The vhost brought up to the current template (Generic Port's is written twice by its stand-in).
      if (ctx.site.type !== 'generic-port') await refreshVhost(ctx);
      const previous = byProcess
        ? await activateProcess(ctx, paths, plan.healthCheck)
        : await activateFiles(ctx, paths, plan.healthCheck);
      // A resumed activation finds itself live already: the release before it is still the previous one.
      if (previous !== paths.linkTarget) state.previous = previous;
      ctx.log(`${plan.release} is live (${Date.now() - started} ms)`);
    },
  };
}
