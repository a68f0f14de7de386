import type { RunOptions } from '../../executor.js';
import type { LedgerEntry, StepContext } from '../../step.js';
import { AS_ROOT, mustRun, StepError } from '../commands.js';
import { siteLayout } from '../site-layout.js';
import { asOwner } from '../user-files.js';
import { detail, type Removal } from './removal-step.js';

/** Where certificate files may live (the TLS module's store); nothing else outside the site is removed. */
export const CERTIFICATE_ROOT = '/etc/siteplane/certificates';

/**
 * `rm -rf` of a ledgered path — after checking that the path is this site's: its directory (or
 * something inside it), its ACME challenge directory, or certificate files under
 * CERTIFICATE_ROOT. A ledger entry naming anything else is refused, whatever put it there.
 */
export async function removeSitePath(ctx: StepContext, entry: LedgerEntry): Promise<Removal> {
  const paths = entry.kind === 'certificate' ? certificatePaths(entry) : [entry.ref];
  for (const path of paths) checkRemovable(ctx, path, entry.kind);
  await mustRun(ctx, ['rm', '-rf', '--', ...paths], removerOf(ctx, paths), `remove ${paths.join(' ')}`);
  ctx.log(`removed ${paths.join(', ')}`);
  return 'removed';
}

/** A certificate entry names its files in details.paths, or is itself a path. */
function certificatePaths(entry: LedgerEntry): string[] {
  const listed = detail(entry, 'paths');
  if (Array.isArray(listed) && listed.length > 0) return listed.map(String);
  if (entry.ref.startsWith('/')) return [entry.ref];
  throw new StepError(`certificate ${JSON.stringify(entry.ref)} names no files (details.paths); nothing Siteplane can remove`);
}

/**
 * Who removes: a path strictly inside the site root is reached through directories the site user
 * controls (a `releases` that is a link), so the user removes it. The site root itself, the ACME
 * directory and certificates are root's to remove: their parents (/home/<user>, whose entry in
 * /home is root's; /var/lib/siteplane/acme; /etc/siteplane) are not the user's to swap, and
 * GNU `rm -rf` follows no link, neither the one it is given nor any inside the tree (it removes
 * the links themselves), so a link the user planted in the tree takes root nowhere.
 */
function removerOf(ctx: StepContext, paths: readonly string[]): RunOptions {
  const layout = siteLayout(ctx.site);
  return paths.every((path) => path.startsWith(`${layout.root}/`)) ? asOwner(layout.user) : AS_ROOT;
}

function checkRemovable(ctx: StepContext, path: string, kind: LedgerEntry['kind']): void {
  const layout = siteLayout(ctx.site);
  const clean = /^\/[A-Za-z0-9._\-/]+$/.test(path) && !path.split('/').some((s) => s === '..' || s === '.');
  const allowed =
    kind === 'certificate'
      ? path.startsWith(`${CERTIFICATE_ROOT}/`)
      : path === layout.root || path.startsWith(`${layout.root}/`) || path === layout.acmeDir;
  if (!clean || !allowed)
    throw new StepError(`refusing to remove ${JSON.stringify(path)}: it is not a path of site ${layout.domain}`);
}
