import type { LedgerEntry, StepContext } from '../../step.js';
import { AS_ROOT, mustRun, StepError } from '../commands.js';
import { siteLayout } from '../site-layout.js';
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
  await mustRun(ctx, ['rm', '-rf', '--', ...paths], AS_ROOT, `remove ${paths.join(' ')}`);
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
