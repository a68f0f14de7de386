import type { Step, StepContext } from '../step.js';
import { mustRun } from '../steps/commands.js';
import { checkRelativePath } from '../steps/site-layout.js';
import type { DeployPlan } from './plan.js';
import { asUserIn, releasePaths } from './release-paths.js';

/**
 * LINK_SHARED, as the site user: $1 the release, $2 shared/, then pairs (kind, relative path).
 * A shared path is made once: seeded from the first release that has it (copied, links kept),
 * else an empty directory or file. Each release's own copy is then replaced by a link to it.
 */
export const LINK_SHARED = `set -euo pipefail
release=$1 shared=$2
shift 2
while [ $# -ge 2 ]; do
  kind=$1 path=$2
  shift 2
  s="$shared/$path" r="$release/$path"
  if [ ! -e "$s" ] && [ ! -L "$s" ]; then
    mkdir -p -- "$(dirname -- "$s")"
    if [ -e "$r" ] && [ ! -L "$r" ]; then cp -a -- "$r" "$s"; echo "seeded $path"
    elif [ "$kind" = directory ]; then mkdir -p -- "$s"; echo "created $path"
    else : > "$s"; echo "created $path"; fi
  fi
  rm -rf -- "$r"
  mkdir -p -- "$(dirname -- "$r")"
  ln -s -- "$s" "$r"
done`;

export function linkShared(plan: DeployPlan): Step {
  return {
    name: 'link shared files',
    async run(ctx: StepContext) {
      const paths = releasePaths(ctx.site, plan.release);
      if (plan.sharedPaths.length === 0) {
        ctx.log('no shared files or folders');
        return;
      }
      const pairs = plan.sharedPaths.flatMap(({ path, kind }) => {
        const clean = checkRelativePath(path, 'shared path');
        return [kind === 'directory' ? 'directory' : 'file', clean];
      });
      if (pairs.some((value, i) => i % 2 === 1 && value === '')) throw new Error('a shared path cannot be the release itself');
      const result = await mustRun(
        ctx,
        ['bash', '-c', LINK_SHARED, 'link-shared', paths.dir, paths.layout.shared, ...pairs],
        asUserIn(paths.layout),
        'link the shared files',
      );
      for (const line of result.stdout.split('\n').filter(Boolean))
        ctx.log(`shared/${line.replace(/^\w+ /, '')}: ${line.split(' ')[0]}`);
      ctx.log(`linked ${plan.sharedPaths.map((p) => p.path).join(', ')} from ${paths.layout.shared}`);
    },
  };
}
