import { quoteArg } from '../shell-quote.js';
import type { ProvisionedSite, StepContext } from '../step.js';
import { AS_ROOT, mustRun } from '../steps/commands.js';
import { checkPhpVersion } from '../steps/site-layout.js';

/**
 * `php` and `composer` pinned to the site's PHP version for its hooks and build. Debian's
 * `composer` package depends on the distribution's default PHP CLI, and a server with several
 * versions (Sury's repository) points `/usr/bin/php` at whichever alternative is highest, so
 * `php artisan …`, `./artisan` (`#!/usr/bin/env php`) and Composer's platform check would run on
 * another PHP than the site's pool. The shims live in a root-owned directory outside every user's
 * tree, one per version, shared by the server's sites; hooks find them first on their PATH.
 */
export function phpShimDirectory(version: string): string {
  return `/usr/local/lib/siteplane/php${checkPhpVersion(version)}/bin`;
}

/** Creates (or re-points) the version's shims; one command, as root, in root's own directory. */
const SHIMS = `d=$1 v=$2
install -d -m 0755 -o root -g root /usr/local/lib/siteplane "\${d%/bin}" "$d"
ln -sfn "/usr/bin/php$v" "$d/php"
printf '#!/bin/sh\\nexec /usr/bin/php%s /usr/bin/composer "$@"\\n' "$v" > "$d/composer.new"
chmod 0755 "$d/composer.new"
mv -f "$d/composer.new" "$d/composer"`;

export async function ensurePhpShims(ctx: StepContext, version: string): Promise<void> {
  await mustRun(ctx, ['sh', '-c', SHIMS, 'sh', phpShimDirectory(version), version], AS_ROOT, `PHP ${version} shims`);
}

/** The line a hook's shell reads before the user's command: the site's PHP first on PATH (PHP sites only). */
export function phpPathLine(site: Pick<ProvisionedSite, 'runtime'>): string {
  const version = site.runtime.php?.version;
  return version ? `export PATH=${quoteArg(phpShimDirectory(version))}:"$PATH"\n` : '';
}
