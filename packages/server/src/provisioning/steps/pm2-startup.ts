import type { LedgerEntry, StepContext } from '../step.js';
import { AS_ROOT, mustRun } from './commands.js';
import { recordOnce } from './ledger.js';
import { pathKind } from './remote-files.js';
import { sharedResourceInUse } from './remove/shared-resources.js';
import { hasSystemd } from './services.js';

/** What `pm2 startup systemd -u <user>` installs: the unit, and the link that enables it at boot. */
export function pm2StartupUnit(user: string): { name: string; path: string; wantedBy: string } {
  const name = `pm2-${user}.service`;
  return { name, path: `/etc/systemd/system/${name}`, wantedBy: `/etc/systemd/system/multi-user.target.wants/${name}` };
}

export function pm2StartupEntry(user: string): LedgerEntry {
  return { kind: 'pm2_startup', ref: pm2StartupUnit(user).path, details: { shared: true, user } };
}

/**
 * With systemd, `pm2 startup` installs pm2-<user>.service, which restores the saved list at boot.
 * Without systemd there is no boot hook to install: the saved list is restored by `pm2 resurrect`.
 * The unit is shared by the user's Node sites and recorded in their ledgers, so the removal of the
 * last one removes it; a unit that Siteplane did not install is left alone and never recorded.
 * The caller holds the user's PM2 lock.
 */
export async function ensureBootResurrection(ctx: StepContext, user: string, home: string): Promise<void> {
  if (!(await hasSystemd(ctx))) {
    ctx.log(`no systemd: after a reboot run \`pm2 resurrect\` as ${user} to restore the saved processes`);
    return;
  }
  const entry = pm2StartupEntry(user);
  if ((await pathKind(ctx, entry.ref)) !== null) {
    // Installed for another site of the user (their ledger lists it): this site shares it.
    if (await sharedResourceInUse(ctx, entry)) await recordOnce(ctx, entry);
    return;
  }
  await recordOnce(ctx, entry);
  await mustRun(ctx, ['pm2', 'startup', 'systemd', '-u', user, '--hp', home], AS_ROOT, `install PM2's boot service for ${user}`);
  ctx.log(`installed pm2-${user}.service to restore ${user}'s processes at boot`);
}
