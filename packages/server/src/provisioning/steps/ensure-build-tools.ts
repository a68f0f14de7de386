import type { Step, StepContext } from '../step.js';
import { ensurePackages, installedPackages } from './apt.js';

/**
 * A C/C++ compiler, make and Python for node-gyp, before a framework's npm install that compiles
 * native modules: Strapi's better-sqlite3 and Directus's isolated-vm and argon2 build from source
 * when npm cannot download a prebuilt binary (those come from GitHub, which many servers cannot
 * reach), and a minimal Debian has none of these. Only the recipes that need it list this step.
 */
export const BUILD_TOOLS = ['build-essential', 'python3'] as const;

export function ensureBuildTools(): Step {
  return {
    name: 'ensure build tools',
    async run(ctx: StepContext) {
      // Checked without the lock first: most runs find them and need not wait for another install.
      if ((await installedPackages(ctx, BUILD_TOOLS)).size === BUILD_TOOLS.length) {
        ctx.log(`${BUILD_TOOLS.join(' and ')} are installed`);
        return;
      }
      const installed = await ctx.withServerLock('packages', () => ensurePackages(ctx, BUILD_TOOLS));
      if (installed.length === 0) ctx.log(`${BUILD_TOOLS.join(' and ')} are installed`);
    },
  };
}
