import type { LedgerEntry, StepContext } from '../../step.js';
import { AS_ROOT, mustRun, StepError } from '../commands.js';
import { ConfigTestFailed } from '../config-file.js';
import { reloadNginx, testNginx } from '../services.js';
import { detail, type Removal, stringDetail } from './removal-step.js';

const AVAILABLE = /^\/etc\/nginx\/sites-available\/[A-Za-z0-9.-]+\.conf$/;
const ENABLED = /^\/etc\/nginx\/sites-enabled\/[A-Za-z0-9.-]+\.conf$/;
const LOG = /^\/var\/log\/nginx\/[A-Za-z0-9.-]+\.log$/;

/**
 * Disables and deletes the vhost (and its logs), tests and reloads nginx. The entry stays until
 * the reload succeeded: a retry then tests and reloads again even though the files are gone.
 */
export async function removeNginxVhost(ctx: StepContext, entry: LedgerEntry): Promise<Removal> {
  const vhost = checked(entry.ref, AVAILABLE, 'vhost');
  const enabled = checked(
    stringDetail(entry, 'enabled') ?? vhost.replace('/sites-available/', '/sites-enabled/'),
    ENABLED,
    'vhost link',
  );
  const logs = ((detail(entry, 'logs') as unknown[] | undefined) ?? []).map((log) => checked(String(log), LOG, 'log file'));
  await ctx.withServerLock('nginx', async () => {
    await mustRun(
      ctx,
      ['rm', '-f', '--', enabled, vhost, `${vhost}.siteplane-new`, `${vhost}.siteplane-previous`, ...logs],
      AS_ROOT,
      `remove the vhost ${vhost}`,
    );
    ctx.log(`removed nginx vhost ${vhost}`);
    const test = await testNginx(ctx);
    if (test.code !== 0) throw new ConfigTestFailed(vhost, test);
    await reloadNginx(ctx);
  });
  return 'removed';
}

function checked(path: string, pattern: RegExp, what: string): string {
  if (!pattern.test(path) || path.includes('..'))
    throw new StepError(`refusing to remove ${what} ${JSON.stringify(path)}: not a path Siteplane manages`);
  return path;
}
