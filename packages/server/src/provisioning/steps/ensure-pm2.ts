import type { Step, StepContext } from '../step.js';
import { ensurePackages } from './apt.js';
import { AS_ROOT, mustRunLong, programPath } from './commands.js';
import { npmRegistryArgs } from './npm.js';

/** PM2 from npm (settings.npmRegistry when set), installed globally once per server. */
export function ensurePm2(): Step {
  return {
    name: 'ensure PM2',
    async run(ctx: StepContext) {
      const existing = await programPath(ctx, 'pm2', AS_ROOT);
      if (existing) {
        ctx.log(`PM2 is installed (${existing})`);
        return;
      }
      await ctx.withServerLock('packages', async () => {
        // A reused Node from Debian may lack npm (a separate package there; NodeSource's bundles it).
        if (!(await programPath(ctx, 'npm', AS_ROOT))) await ensurePackages(ctx, ['npm']);
        await mustRunLong(
          ctx,
          ['npm', 'install', '--global', '--no-audit', '--no-fund', ...npmRegistryArgs(ctx), 'pm2@latest'],
          AS_ROOT,
          'install PM2',
        );
      });
      // Its version reaches the facts at the next detection (which reads package.json, not `pm2 -v`).
      ctx.log('installed PM2 with npm');
    },
  };
}
