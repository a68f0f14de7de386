import type { StepContext } from '../step.js';
import { mustRun } from '../steps/commands.js';
import { linkTarget } from '../steps/remote-files.js';
import type { SiteLayout } from '../steps/site-layout.js';
import { asUserIn } from './release-paths.js';

/** Where `current` points (`releases/<id>`), read by the site user: root never follows the user's links. */
export function liveTarget(ctx: StepContext, layout: SiteLayout): Promise<string | null> {
  return linkTarget(ctx, layout.current, asUserIn(layout));
}

/**
 * SWITCH, as the site user in the site root: `current` → $1 by a temporary link renamed over it
 * (rename(2): a request sees the old release or the new one, never neither). Prints the previous target.
 */
export const SWITCH = `set -eu
readlink -- current 2>/dev/null || true
ln -s -f -n -- "$1" current.siteplane-new
mv -f -T -- current.siteplane-new current`;

/** Points `current` at target (relative, `releases/<id>`); returns what it pointed to before. */
export async function switchCurrent(ctx: StepContext, layout: SiteLayout, target: string): Promise<string | null> {
  const result = await mustRun(ctx, ['sh', '-c', SWITCH, 'sh', target], asUserIn(layout), `point current to ${target}`);
  const previous = result.stdout.trim();
  ctx.log(`current now points to ${target}${previous ? ` (was ${previous})` : ''}`);
  return previous === '' ? null : previous;
}
