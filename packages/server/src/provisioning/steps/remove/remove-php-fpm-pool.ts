import type { LedgerEntry, StepContext } from '../../step.js';
import { AS_ROOT, mustRun, run, StepError } from '../commands.js';
import { ConfigTestFailed } from '../config-file.js';
import { pathKind } from '../remote-files.js';
import { reloadPhpFpm, testPhpFpm } from '../services.js';
import { fpmPoolLayout, poolLock } from '../site-layout.js';
import { type Removal, stringDetail } from './removal-step.js';
import { sharedResourceInUse } from './shared-resources.js';

/**
 * The pool is shared by its user's sites: it is deleted only when no other site uses it. Two
 * witnesses, either of which keeps it: the job runner's view of the other sites' ledgers (when
 * it offers sharedResourceInUse) and the server itself — an enabled vhost that still names the
 * pool's socket. This site's own vhost was removed by the step before.
 */
export async function removePhpFpmPool(ctx: StepContext, entry: LedgerEntry): Promise<Removal> {
  const pool = fpmPoolLayout(stringDetail(entry, 'user') ?? '', stringDetail(entry, 'phpVersion') ?? '');
  if (pool.file !== entry.ref)
    throw new StepError(`refusing to remove pool ${JSON.stringify(entry.ref)}: not a path Siteplane manages`);
  return ctx.withServerLock(poolLock(pool), async () => {
    const byLedger = await sharedResourceInUse(ctx, entry);
    const users = await vhostsUsingSocket(ctx, pool.socket);
    if (byLedger || users.length > 0) {
      ctx.log(`kept PHP-FPM pool ${pool.file}: still used by ${users.length > 0 ? users.join(', ') : 'another site'}`);
      return 'released';
    }
    // rm -f, test and reload even when the file is already gone: a retry after a failed reload
    // must still get the master to drop the pool.
    const present = (await pathKind(ctx, pool.file)) !== null;
    await mustRun(
      ctx,
      ['rm', '-f', '--', pool.file, `${pool.file}.siteplane-new`, `${pool.file}.siteplane-previous`],
      AS_ROOT,
      `remove ${pool.file}`,
    );
    ctx.log(
      present
        ? `removed PHP-FPM pool ${pool.file} (no other site of ${pool.user} uses PHP ${pool.version})`
        : `PHP-FPM pool ${pool.file} is already gone`,
    );
    const test = await testPhpFpm(ctx, pool);
    if (test.code !== 0) throw new ConfigTestFailed(pool.file, test);
    await reloadPhpFpm(ctx, pool);
    return 'removed';
  });
}

/** Enabled vhosts that pass PHP to this socket (grep -R follows sites-enabled's symlinks). */
async function vhostsUsingSocket(ctx: StepContext, socket: string): Promise<string[]> {
  const result = await run(ctx, ['grep', '-R', '-l', '-F', '--', `unix:${socket};`, '/etc/nginx/sites-enabled'], AS_ROOT);
  if (result.code !== 0) return [];
  return result.stdout.split('\n').filter((line) => line.trim() !== '');
}
