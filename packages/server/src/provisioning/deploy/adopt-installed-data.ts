import type { ProvisionedSite, Step, StepContext } from '../step.js';
import { mustRun } from '../steps/commands.js';
import { checkRelativePath } from '../steps/site-layout.js';
import type { DeployPlan } from './plan.js';
import { asUserIn, releasePaths } from './release-paths.js';

/**
 * The release Siteplane installed at create for the types whose app it installs from npm
 * (steps/frameworks/install-strapi.ts, install-directus.ts): the user's data lives there until the
 * first deployment (Strapi's .env with its secrets and database settings, its uploads and SQLite
 * file; Directus's configuration and uploads).
 */
export function installedReleaseOf(site: Pick<ProvisionedSite, 'type'>): string | null {
  return site.type === 'strapi' || site.type === 'directus' ? site.type : null;
}

/**
 * ADOPT, as the site user in the site root: $1 the installed release's name, $2 shared/, then pairs
 * (kind, relative path). Only while `current` still points to the installed release (the first
 * deployment): each shared path shared/ does not have yet is moved there from the installed
 * release — rename(2) within the site root, so the running instance keeps writing to the same files
 * (an open SQLite database, an upload in progress) — and a link is left in its place, through which
 * the instance goes on finding them until the new release is live. A directory the installed
 * release lacks is made in shared/ and linked the same way, so nothing it writes meanwhile is left
 * behind. Prints `moved P` and `linked P`. Nothing is copied, nothing is deleted.
 */
export const ADOPT = `set -euo pipefail
name=$1 shared=$2
shift 2
[ "$(readlink -- current 2>/dev/null || true)" = "releases/$name" ] || exit 0
installed="releases/$name"
[ -d "$installed" ] && [ ! -L "$installed" ] || exit 0
while [ $# -ge 2 ]; do
  kind=$1 path=$2
  shift 2
  s="$shared/$path" i="$installed/$path"
  if [ -e "$s" ] || [ -L "$s" ] || [ -L "$i" ]; then continue; fi
  mkdir -p -- "$(dirname -- "$s")"
  if [ -e "$i" ]; then mv -T -- "$i" "$s"; echo "moved $path"
  elif [ "$kind" = directory ]; then mkdir -p -- "$s" "$(dirname -- "$i")"; echo "linked $path"
  else continue; fi
  ln -s -- "$s" "$i"
done`;

/**
 * The first deployment of a Strapi or Directus site keeps the data of the instance Siteplane
 * installed: its shared paths are moved into shared/ before the new release links them
 * (link-shared.ts), so the user's project starts with the same secrets, database and uploads.
 */
export function adoptInstalledData(plan: DeployPlan): Step {
  return {
    name: 'keep the installed data',
    async run(ctx: StepContext) {
      const installed = installedReleaseOf(ctx.site);
      const paths = releasePaths(ctx.site, plan.release);
      if (installed === null || plan.sharedPaths.length === 0) {
        ctx.log('nothing installed to keep');
        return;
      }
      const pairs = plan.sharedPaths.flatMap(({ path, kind }) => [kind, checkRelativePath(path, 'shared path')]);
      const result = await mustRun(
        ctx,
        ['bash', '-c', ADOPT, 'adopt', installed, paths.layout.shared, ...pairs],
        asUserIn(paths.layout),
        'move the installed data into shared/',
      );
      const lines = result.stdout.split('\n').filter(Boolean);
      for (const line of lines) {
        const [what, path] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)];
        ctx.log(
          what === 'moved'
            ? `shared/${path}: moved from releases/${installed}, where a link now points to it`
            : `shared/${path}: created, linked from releases/${installed}`,
        );
      }
      if (lines.length === 0) ctx.log(`releases/${installed} is not live or its data is in shared/ already`);
    },
  };
}
