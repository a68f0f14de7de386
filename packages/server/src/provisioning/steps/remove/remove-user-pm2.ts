import type { LedgerEntry, StepContext } from '../../step.js';
import { AS_ROOT, mustRun, StepError, systemUserExists } from '../commands.js';
import { pm2, pm2Lock, runningPm2Processes } from '../pm2.js';
import { pm2StartupUnit } from '../pm2-startup.js';
import { hasSystemd } from '../services.js';
import { checkSystemUser, siteLayout } from '../site-layout.js';
import { type Removal, stringDetail } from './removal-step.js';
import { sharedResourceInUse } from './shared-resources.js';

/**
 * A user's PM2 — the daemon (`pm2_daemon`) and the boot unit `pm2 startup` installed
 * (`pm2_startup`) — is shared by their Node sites and goes with the last one. Two witnesses, either
 * of which keeps it, as for the PHP-FPM pool: another live site's ledger listing it (the job
 * runner's view), and the daemon itself still running processes (this site's was deleted by the
 * step before; anything left is another site's or the user's own). Both removers hold the user's
 * PM2 lock, which the create step holds while it records and starts, so a site that is just being
 * created keeps the daemon.
 */
export async function removePm2Daemon(ctx: StepContext, entry: LedgerEntry): Promise<Removal> {
  const user = checkSystemUser(entry.ref);
  return ctx.withServerLock(pm2Lock(user), async () => {
    const use = await pm2Use(ctx, entry, user);
    if (use.kind === 'used') {
      ctx.log(`kept the PM2 daemon of ${user}: ${use.why}`);
      return 'released';
    }
    // Not running (already stopped by an earlier attempt, or never started): nothing to stop, and
    // `pm2 kill` would first start a daemon to stop it.
    if (use.daemon !== 'running') {
      ctx.log(`the PM2 daemon of ${user} is not running`);
      return 'removed';
    }
    await pm2(ctx, layoutOf(ctx, user), ['kill'], `stop the PM2 daemon of ${user}`);
    ctx.log(`stopped the PM2 daemon of ${user} (no other site of ${user} uses PM2)`);
    return 'removed';
  });
}

/** Disables and deletes pm2-<user>.service (rm -f and daemon-reload even when gone: a retry finishes). */
export async function removePm2Startup(ctx: StepContext, entry: LedgerEntry): Promise<Removal> {
  const user = checkSystemUser(stringDetail(entry, 'user') ?? '');
  const unit = pm2StartupUnit(user);
  if (unit.path !== entry.ref)
    throw new StepError(`refusing to remove ${JSON.stringify(entry.ref)}: not a unit Siteplane manages`);
  return ctx.withServerLock(pm2Lock(user), async () => {
    const use = await pm2Use(ctx, entry, user);
    if (use.kind === 'used') {
      ctx.log(`kept ${unit.name}: ${use.why}`);
      return 'released';
    }
    // What `systemctl disable` does for a WantedBy=multi-user.target unit, also without systemd running.
    await mustRun(ctx, ['rm', '-f', '--', unit.wantedBy, unit.path], AS_ROOT, `remove ${unit.path}`);
    if (await hasSystemd(ctx)) await mustRun(ctx, ['systemctl', 'daemon-reload'], AS_ROOT, 'reload systemd units');
    ctx.log(`removed ${unit.name} (no other site of ${user} uses PM2)`);
    return 'removed';
  });
}

type Pm2Use = { kind: 'used'; why: string } | { kind: 'unused'; daemon: 'running' | 'stopped' };

/** Whether the user's PM2 is still needed, and else whether their daemon runs. */
async function pm2Use(ctx: StepContext, entry: LedgerEntry, user: string): Promise<Pm2Use> {
  if (await sharedResourceInUse(ctx, entry)) return { kind: 'used', why: `another site of ${user} uses it` };
  // A removed user's processes went with them.
  if (!(await systemUserExists(ctx, user))) return { kind: 'unused', daemon: 'stopped' };
  // Read without starting a daemon; a running one whose list cannot be read fails the step.
  const processes = await runningPm2Processes(ctx, layoutOf(ctx, user));
  if (processes === null) return { kind: 'unused', daemon: 'stopped' };
  if (processes.length > 0) return { kind: 'used', why: `it still runs ${processes.map((p) => p.name).join(', ')}` };
  return { kind: 'unused', daemon: 'running' };
}

function layoutOf(ctx: StepContext, user: string) {
  return siteLayout({ user, domain: ctx.site.domain });
}
