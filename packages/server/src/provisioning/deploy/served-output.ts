import type { StepContext } from '../step.js';
import { run, StepError } from '../steps/commands.js';
import { below } from '../steps/site-layout.js';
import { staticOutputDirectory } from '../steps/vhost-backend.js';
import type { DeployPlan } from './plan.js';
import { asUserIn, type ReleasePaths } from './release-paths.js';

/**
 * Static build types (NodeJS Static, Nuxt Static): nginx serves a fixed directory of `current`
 * (the site's artifactPath, Nuxt's `.output/public` or `dist`), written into the vhost when the
 * site was created. Before the switch, the new release must have that directory: a build that left
 * it elsewhere or not at all fails here, while the live release keeps serving, instead of
 * answering 403/404 until the health check switches back. A deploy-settings artifactPath other than
 * the served directory is refused for the same reason: nginx would not serve it.
 */
export async function checkServedOutput(ctx: StepContext, paths: ReleasePaths, plan: DeployPlan): Promise<void> {
  if (ctx.site.type !== 'nodejs-static' && ctx.site.type !== 'nuxt-static') return;
  const served = staticOutputDirectory(ctx.site);
  if (plan.artifactPath !== null && below('.', plan.artifactPath, 'artifactPath') !== below('.', served, 'artifactPath')) {
    throw new StepError(
      `artifactPath ${JSON.stringify(plan.artifactPath)} in the deploy settings is not what nginx serves for this site (${JSON.stringify(served)}, set when it was created): reset it ({"reset": ["artifactPath"]}) or make the build write there`,
    );
  }
  // As the site user: the release is theirs, and root follows none of its links.
  const dir = below(paths.dir, served, 'artifactPath');
  const found = await run(ctx, ['test', '-d', dir], asUserIn(paths.layout));
  if (found.code !== 0) {
    throw new StepError(
      `the build left no ${served}/ in release ${paths.name}: nginx serves that directory of the release (check the build command and artifactPath); the live release keeps serving`,
    );
  }
  ctx.log(`${served}/ is there: nginx serves it once ${paths.name} is live`);
}
