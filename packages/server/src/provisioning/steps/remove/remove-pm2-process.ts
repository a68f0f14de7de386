import type { LedgerEntry, StepContext } from '../../step.js';
import { systemUserExists } from '../commands.js';
import { pm2, pm2Processes } from '../pm2.js';
import { checkSystemUser, siteLayout } from '../site-layout.js';
import type { Removal } from './removal-step.js';
import { stringDetail } from './removal-step.js';

/** Deletes the site's process from its user's PM2 and saves the list (so it is not resurrected). */
export async function removePm2Process(ctx: StepContext, entry: LedgerEntry): Promise<Removal> {
  const user = checkSystemUser(stringDetail(entry, 'user') ?? ctx.site.user);
  const layout = siteLayout({ user, domain: ctx.site.domain });
  if (!(await systemUserExists(ctx, user))) {
    ctx.log(`PM2 process ${entry.ref}: user ${user} is gone, so is the process`);
    return 'removed';
  }
  const processes = await pm2Processes(ctx, layout);
  if (!processes.some((p) => p.name === entry.ref)) {
    ctx.log(`PM2 process ${entry.ref} is already gone`);
    return 'removed';
  }
  await pm2(ctx, layout, ['delete', entry.ref], `delete PM2 process ${entry.ref}`);
  await pm2(ctx, layout, ['save'], 'save the PM2 process list');
  ctx.log(`deleted PM2 process ${entry.ref}`);
  return 'removed';
}
