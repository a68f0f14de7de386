import type { Step, StepContext } from '../step.js';
import { mustRun, StepError } from '../steps/commands.js';
import { INITIAL_RELEASE } from '../steps/site-layout.js';
import type { DeployPlan } from './plan.js';
import { asUserIn, checkReleaseName, releasePaths } from './release-paths.js';
import type { DeployState } from './state.js';

/**
 * Which releases to remove: the oldest beyond `keep` (names sort by time; the initial placeholder
 * release is the oldest of all), never the live one nor the one live before it (a rollback's
 * default target). Leftovers of interrupted exports (`*.partial`) always go.
 */
export function releasesToRemove(
  names: string[],
  keep: number,
  live: string | null,
  previous: string | null,
  kept?: readonly string[],
): string[] {
  const partial = names.filter((name) => name.endsWith('.partial') || name.endsWith('.tar.gz'));
  const releases = names
    .filter((name) => !partial.includes(name) && !name.startsWith('.'))
    .sort((a, b) => (sortKey(a) < sortKey(b) ? -1 : sortKey(a) > sortKey(b) ? 1 : 0));
  // Not known (a job resumed after activation): the release made just before the live one.
  const before =
    previous ??
    (live === null ? null : (releases.filter((name) => name !== live && sortKey(name) < sortKey(live)).at(-1) ?? null));
  const protectedNames = new Set([live, before].filter((name): name is string => name !== null));
  // The control plane's list: everything else (failed or cancelled deploys' releases included) goes.
  if (kept !== undefined) return [...partial, ...releases.filter((name) => !protectedNames.has(name) && !kept.includes(name))];
  const excess = Math.max(0, releases.length - Math.max(1, keep));
  const candidates = releases.filter((name) => !protectedNames.has(name));
  return [...partial, ...candidates.slice(0, Math.min(excess, candidates.length))];
}

/** Release names sort by time; the initial placeholder release is older than all. */
function sortKey(name: string): string {
  return name === INITIAL_RELEASE ? '' : name;
}

/** LIST, as the site user: where the link $1 points (an empty line when nowhere), then the entries of $2. */
export const LIST = `set -eu
readlink -- "$1" || echo
ls -1 -A -- "$2"`;

/** PRUNE, as the site user in releases/: removes the names given. */
export const PRUNE = `set -eu
cd -- "$1"
shift
for name in "$@"; do rm -rf -- "./$name"; done`;

export function pruneReleases(plan: DeployPlan, state: DeployState): Step {
  return {
    name: 'prune releases',
    async run(ctx: StepContext) {
      const paths = releasePaths(ctx.site, plan.release);
      const user = asUserIn(paths.layout);
      // The live link and the releases in one round trip: the link's target on the first line.
      const listed = await mustRun(
        ctx,
        ['sh', '-c', LIST, 'sh', paths.layout.current, paths.layout.releases],
        user,
        'list the releases',
      );
      const [link = '', ...entries] = listed.stdout.split('\n');
      const names = entries.filter(Boolean);
      const live = link === '' ? null : link.replace(/^releases\//, '');
      const previous = state.previous?.replace(/^releases\//, '') ?? null;
      const remove = releasesToRemove(names, plan.keepReleases, live, previous, plan.keptReleases);
      for (const name of remove) if (name.includes('/')) throw new StepError(`odd release name ${name}`);
      for (const name of remove.filter((n) => !n.endsWith('.partial') && !n.endsWith('.tar.gz'))) checkReleaseName(name);
      if (remove.length === 0) {
        ctx.log(`${names.length} releases kept (at most ${plan.keepReleases})`);
        return;
      }
      await mustRun(ctx, ['sh', '-c', PRUNE, 'sh', paths.layout.releases, ...remove], user, 'remove old releases');
      ctx.log(`removed ${remove.join(', ')}; kept ${names.length - remove.length}`);
    },
  };
}
