import type { ProvisionedSite, StepContext } from '../step.js';
import { mustRun } from '../steps/commands.js';
import type { DeployPlan } from './plan.js';
import { asUserIn, releasePaths } from './release-paths.js';
import { renderEnvFile } from './write-environment.js';

/**
 * Laravel reads its settings from `.env` (shared across releases by default), not from the
 * release's `.siteplane.env`: the run-time variables set through the environment API are written
 * there too, as a block between two marker lines that each deploy replaces. Lines outside the block
 * are the user's own and stay as they are. The block comes last: Laravel's dotenv lets a later line
 * win, so a key set through the API wins over the same key written by hand above it.
 *
 * The live release is not disturbed by the change before activation when its configuration is
 * cached (the default `caches` hook: `config:cache` reads `.env` once, into the release's
 * bootstrap/cache); a rolled-back release keeps the configuration it cached.
 */
export const DOTENV_BEGIN = '# >>> siteplane: set through the environment API; replaced at every deploy';
export const DOTENV_END = '# <<< siteplane';

/**
 * DOTENV_BLOCK, as the site user: $1 the .env file, $2 and $3 the markers; stdin the new block.
 * The old block is dropped, the rest kept, the new block appended; written through a temporary
 * file renamed over it (0600: it holds secrets), so a reader never sees half a file.
 */
export const DOTENV_BLOCK = `set -euo pipefail
f=$1 begin=$2 end=$3
umask 077
tmp="$f.siteplane-tmp"
rm -f -- "$tmp"
{
  if [ -f "$f" ]; then awk -v b="$begin" -v e="$end" '$0 == b { skip = 1; next } skip && $0 == e { skip = 0; next } !skip' "$f"; fi
  cat
} > "$tmp"
chmod 600 -- "$tmp"
mv -f -T -- "$tmp" "$f"`;

export function dotenvBlock(runtime: Record<string, string>): string {
  const lines = renderEnvFile(runtime);
  return lines === '' ? '' : `${DOTENV_BEGIN}\n${lines}${DOTENV_END}\n`;
}

/** Writes the block into the shared `.env` when `.env` is shared, else into the release's own. */
export async function writeLaravelDotenv(ctx: StepContext, site: ProvisionedSite, plan: DeployPlan): Promise<void> {
  const paths = releasePaths(site, plan.release);
  const shared = plan.sharedPaths.some((p) => p.path.replace(/^\.\//, '') === '.env');
  const file = shared ? `${paths.layout.shared}/.env` : `${paths.dir}/.env`;
  await mustRun(
    ctx,
    ['bash', '-c', DOTENV_BLOCK, 'dotenv-block', file, DOTENV_BEGIN, DOTENV_END],
    { ...asUserIn(paths.layout, paths.dir), stdin: dotenvBlock(plan.environment.runtime) },
    'write the run-time variables into .env',
  );
  const count = Object.keys(plan.environment.runtime).length;
  ctx.log(`wrote ${count} run-time variables into ${shared ? 'shared/.env' : "the release's .env"} (mode 0600)`);
}
