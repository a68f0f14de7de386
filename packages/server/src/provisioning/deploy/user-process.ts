import type { StepContext } from '../step.js';
import { ECOSYSTEM_MODE } from '../steps/ensure-pm2-process.js';
import { claim, recordOnce } from '../steps/ledger.js';
import { pm2, pm2DaemonEntry, pm2Processes } from '../steps/pm2.js';
import { ensureBootResurrection } from '../steps/pm2-startup.js';
import { type SiteLayout, sitePort } from '../steps/site-layout.js';
import { writeUserFile } from '../steps/user-files.js';
import { renderEcosystem } from '../templates/pm2-ecosystem.js';
import { RELEASE_ENTRY } from './launcher.js';

/**
 * Generic Port's PM2 process, which its site gets only with its first deploy (creating the site
 * installs no process: the port was the owner's). The ecosystem file runs the release's launcher
 * (the user's start command, launcher.ts) through `current` in fork mode: a process that need not
 * be Node cannot take over the port from PM2's cluster master, so PM2 restarts it in place.
 * Recorded in the site's ledger, so removing the site stops it. Returns the ecosystem file for
 * `pm2 startOrReload` and whether the process is new (then saved for boot once it is live).
 * The caller holds the user's PM2 lock.
 */
export async function ensureUserProcessFile(
  ctx: StepContext,
  layout: SiteLayout,
): Promise<{ ecosystem: string; isNew: boolean }> {
  await recordOnce(ctx, pm2DaemonEntry(layout));
  const name = layout.domain;
  const existing = (await pm2Processes(ctx, layout)).some((p) => p.name === name);
  await claim(
    ctx,
    { kind: 'pm2_process', ref: name, details: { user: layout.user, ecosystem: layout.ecosystem } },
    existing,
    'PM2 process',
  );
  const content = renderEcosystem({
    name,
    cwd: layout.current,
    script: RELEASE_ENTRY,
    port: sitePort(ctx.site),
    execMode: 'fork',
  });
  const change = await writeUserFile(
    ctx,
    { user: layout.user, path: layout.ecosystem, content, mode: `0${ECOSYSTEM_MODE}` },
    { onlyIfChanged: true },
  );
  if (change !== 'unchanged') ctx.log(`wrote ${layout.ecosystem} (fork mode: your start command, PORT ${sitePort(ctx.site)})`);
  return { ecosystem: layout.ecosystem, isNew: !existing };
}

/** After the first start: the process list saved, so PM2 brings the process back at boot. */
export async function saveForBoot(ctx: StepContext, layout: SiteLayout): Promise<void> {
  await pm2(ctx, layout, ['save'], 'save the PM2 process list');
  await ensureBootResurrection(ctx, layout.user, layout.home);
}
