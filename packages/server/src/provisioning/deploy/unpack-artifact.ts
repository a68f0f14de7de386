import type { Step, StepContext } from '../step.js';
import { pathKind } from '../steps/remote-files.js';
import { refuseLiveRelease } from './fetch-git.js';
import { mustRunLong } from './long-run.js';
import type { DeployPlan, DeploySource } from './plan.js';
import { asUserIn, releasePaths } from './release-paths.js';

/**
 * UNPACK, as the site user: the .tar.gz arrives base64-encoded on stdin (the executors' stdin is
 * text), is listed first and refused when a member is absolute or climbs out with `..` (GNU tar
 * would only skip those, silently), then unpacked without owners into a temporary directory renamed
 * into release $1. Symlinks in the archive stay the user's own business: the user unpacks it.
 */
export const UNPACK = `set -euo pipefail
archive="$1.tar.gz"
rm -rf -- "$1.partial" "$archive"
trap 'rm -f -- "$archive"' EXIT
base64 -d > "$archive"
tar -t -z -f "$archive" | while IFS= read -r member; do
  case "/$member/" in */../*) echo "archive member $member climbs out of the release" >&2; exit 3 ;; esac
  case $member in /*) echo "archive member $member is an absolute path" >&2; exit 3 ;; esac
done
mkdir -p -- "$1.partial"
tar -x -z -f "$archive" -C "$1.partial" --no-same-owner --no-same-permissions
mv -T -- "$1.partial" "$1"`;

export function unpackArtifact(plan: DeployPlan): Step {
  return {
    name: 'unpack artifact',
    async run(ctx: StepContext) {
      const source = plan.source as Extract<DeploySource, { kind: 'artifact' }>;
      const paths = releasePaths(ctx.site, plan.release);
      const user = asUserIn(paths.layout);
      await refuseLiveRelease(ctx, paths.layout, paths.linkTarget);
      if ((await pathKind(ctx, paths.dir, user)) === 'directory') {
        ctx.log(`${paths.dir} was unpacked by an earlier attempt`);
        return;
      }
      await mustRunLong(
        ctx,
        ['bash', '-c', UNPACK, 'unpack', paths.dir],
        { ...user, stdin: source.archive.toString('base64') },
        'unpack the artifact',
      );
      ctx.log(`unpacked the artifact (${source.archive.length} bytes) into ${paths.dir}`);
    },
  };
}
