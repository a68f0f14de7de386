import type { Step, StepContext } from '../step.js';
import { ensurePackages, installedPackages } from '../steps/apt.js';

/**
 * git for the mirror and the export, curl for the health check through nginx: a minimal Debian has
 * neither. Checked without the lock first, installed under the `packages` lock like every install.
 */
export const DEPLOY_TOOLS = ['git', 'curl'] as const;

export function ensureDeployTools(): Step {
  return {
    name: 'ensure git',
    async run(ctx: StepContext) {
      if ((await installedPackages(ctx, DEPLOY_TOOLS)).size === DEPLOY_TOOLS.length) {
        ctx.log(`${DEPLOY_TOOLS.join(' and ')} are installed`);
        return;
      }
      const installed = await ctx.withServerLock('packages', () => ensurePackages(ctx, DEPLOY_TOOLS));
      ctx.log(installed.length === 0 ? `${DEPLOY_TOOLS.join(' and ')} are installed` : `installed ${installed.join(', ')}`);
    },
  };
}
