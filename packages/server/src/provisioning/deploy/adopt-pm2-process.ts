import type { StepContext } from '../step.js';
import { StepError } from '../steps/commands.js';
import { pm2 } from '../steps/pm2.js';
import { readFile } from '../steps/remote-files.js';
import { sitePort } from '../steps/site-layout.js';
import { asOwner, writeUserFile } from '../steps/user-files.js';
import { renderEcosystem } from '../templates/pm2-ecosystem.js';
import { installedReleaseOf } from './adopt-installed-data.js';
import { appDirectory, RELEASE_ENTRY, renderLauncher, startOf } from './launcher.js';
import type { ReleasePaths } from './release-paths.js';
import { liveTarget } from './switch-current.js';

const RELEASE_TARGET = /^releases\/[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** The script an ecosystem file (templates/pm2-ecosystem.ts) names, or null when it names none. */
export function ecosystemScript(text: string): string | null {
  const match = /"script":\s*("(?:[^"\\]|\\.)*")/.exec(text);
  if (!match?.[1]) return null;
  try {
    return JSON.parse(match[1]) as string;
  } catch {
    return null;
  }
}

/**
 * A Strapi or Directus site's PM2 process runs the framework's CLI as create started it; every
 * release runs RELEASE_ENTRY (launcher.ts), and PM2's reload keeps the script a process was started
 * with. So before the first deployment goes live, the process is started once more under the
 * launcher, still in the installed release (a launcher is written there): its visitors see it
 * restart (a few seconds of 502 while the framework starts), then the deployment's graceful reload
 * replaces it as for every later release, and a failed check can switch back to it. Runs under the
 * PM2 lock; does nothing once the ecosystem names the launcher.
 */
export async function adoptPm2Process(ctx: StepContext, paths: ReleasePaths): Promise<void> {
  if (installedReleaseOf(ctx.site) === null) return;
  const { layout } = paths;
  const text = await readFile(ctx, layout.ecosystem, asOwner(layout.user));
  if (text === null)
    throw new StepError(`${layout.ecosystem} is missing or unreadable: the site's PM2 process is not Siteplane's`);
  if (ecosystemScript(text) === RELEASE_ENTRY) return;

  const live = await liveTarget(ctx, layout);
  if (live !== null && RELEASE_TARGET.test(live)) {
    await writeUserFile(ctx, {
      user: layout.user,
      path: `${layout.root}/${live}/${RELEASE_ENTRY}`,
      content: renderLauncher(appDirectory(ctx.site, null), startOf(ctx.site)),
      mode: '0644',
    });
  }
  await writeUserFile(ctx, {
    user: layout.user,
    path: layout.ecosystem,
    content: renderEcosystem({ name: layout.domain, cwd: layout.current, port: sitePort(ctx.site), script: RELEASE_ENTRY }),
    mode: '0600',
  });
  const started = Date.now();
  await pm2(ctx, layout, ['delete', layout.domain], `stop ${layout.domain}`);
  await pm2(ctx, layout, ['start', layout.ecosystem], `start ${layout.domain} under the launcher`);
  await pm2(ctx, layout, ['save'], 'save the PM2 process list');
  ctx.log(
    `restarted PM2 process ${layout.domain} under Siteplane's launcher in ${live ?? 'current'} (${Date.now() - started} ms; once, at the first deployment of an installed ${ctx.site.type})`,
  );
}
