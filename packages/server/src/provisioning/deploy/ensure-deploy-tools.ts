import { SITE_TYPES } from '@siteplane/contract';
import type { ProvisionedSite, Step, StepContext } from '../step.js';
import { ensurePackages, installedPackages } from '../steps/apt.js';
import { ensurePhpShims } from './php-shims.js';

/**
 * git for the mirror and the export, curl for the health check through nginx: a minimal Debian has
 * neither. Checked without the lock first, installed under the `packages` lock like every install.
 */
export const DEPLOY_TOOLS = ['git', 'curl'] as const;

/**
 * What a site of this type needs besides: Composer for PHP sites (Laravel's default hook, and a PHP
 * site's when it has a composer.json), from the distribution (packagist's installer script would be
 * a download from outside the package sources). Debian's package brings the PHP CLI it runs on.
 */
export function deployToolsFor(site: Pick<ProvisionedSite, 'type'>): string[] {
  return SITE_TYPES[site.type].runtime === 'php' ? [...DEPLOY_TOOLS, 'composer'] : [...DEPLOY_TOOLS];
}

export function ensureDeployTools(): Step {
  return {
    name: 'ensure git',
    async run(ctx: StepContext) {
      const tools = deployToolsFor(ctx.site);
      const said = tools.join(', ');
      const php = ctx.site.runtime.php?.version;
      // The shims need none of the tools (they only link the site's PHP, installed with the site):
      // written on a channel of their own while the tools are looked up, not one round trip later.
      const [present] = await Promise.all([installedPackages(ctx, tools), php ? ensurePhpShims(ctx, php) : null]);
      if (present.size === tools.length) {
        ctx.log(`${said} are installed`);
      } else {
        const installed = await ctx.withServerLock('packages', () => ensurePackages(ctx, tools));
        ctx.log(installed.length === 0 ? `${said} are installed` : `installed ${installed.join(', ')}`);
      }
      if (php) ctx.log(`hooks run php and composer on PHP ${php}`);
    },
  };
}
