import { DEFAULT_NODE } from '../../domain/sites/validate-runtime.js';
import type { Step, StepContext } from '../step.js';
import { ensureNode } from '../steps/ensure-node.js';
import { ensurePm2 } from '../steps/ensure-pm2.js';

/**
 * Node and PM2 for a Generic Port site's first deploy: creating the site installed neither (the
 * port was the owner's) and planned no Node. The server's Node is reused whatever its version (PM2
 * runs on any that Siteplane installs); a server without one gets the version new sites get.
 */
export function ensurePm2Runtime(): Step[] {
  const node = ensureNode();
  return [
    {
      ...node,
      async run(ctx: StepContext) {
        const plan = ctx.site.runtime.node ?? { version: DEFAULT_NODE, action: 'install' as const };
        return node.run({ ...ctx, site: { ...ctx.site, runtime: { ...ctx.site.runtime, node: plan } } });
      },
    },
    ensurePm2(),
  ];
}
