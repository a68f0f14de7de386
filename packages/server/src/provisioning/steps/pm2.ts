import type { RunOptions } from '../executor.js';
import type { StepContext } from '../step.js';
import { mustRun, run } from './commands.js';
import type { SiteLayout } from './site-layout.js';

/**
 * PM2 as the site's user: each user has their own PM2 daemon under ~/.pm2, so one user's
 * processes never see another's. HOME and PM2_HOME are set explicitly: `runuser` keeps root's HOME.
 */
export function asSiteUser(layout: Pick<SiteLayout, 'user' | 'home'>, cwd?: string): RunOptions {
  return {
    asUser: layout.user,
    cwd: cwd ?? layout.home,
    env: { HOME: layout.home, PM2_HOME: `${layout.home}/.pm2` },
  };
}

export interface Pm2Process {
  name: string;
  status: string;
}

/** The user's PM2 processes (`pm2 jlist`); empty when PM2 answers nothing parseable. */
export async function pm2Processes(ctx: StepContext, layout: SiteLayout): Promise<Pm2Process[]> {
  const result = await run(ctx, ['pm2', 'jlist'], asSiteUser(layout));
  if (result.code !== 0) return [];
  // The first call also prints daemon start-up lines ("[PM2] Spawning…") before the JSON.
  for (const line of result.stdout.split('\n').reverse()) {
    if (!line.startsWith('[') || line.startsWith('[PM2')) continue;
    try {
      const list = JSON.parse(line) as { name?: unknown; pm2_env?: { status?: unknown } }[];
      return list.map((p) => ({ name: String(p.name), status: String(p.pm2_env?.status ?? 'unknown') }));
    } catch {
      // not the JSON line
    }
  }
  return [];
}

export async function pm2(ctx: StepContext, layout: SiteLayout, args: string[], what: string): Promise<void> {
  await mustRun(ctx, ['pm2', ...args], asSiteUser(layout), what);
}
