import type { RunOptions } from '../executor.js';
import type { LedgerEntry, StepContext } from '../step.js';
import { mustRun, run, StepError } from './commands.js';
import { livePid } from './services.js';
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

/**
 * The user's daemon is shared by their Node sites: a site records it before its first `pm2`
 * command (which starts the daemon), and the removal of the last one stops it. Both hold this lock,
 * so the daemon is never stopped under a site that is just starting its process.
 */
export function pm2Lock(user: string): string {
  return `pm2:${user}`;
}

export function pm2DaemonEntry(layout: Pick<SiteLayout, 'user' | 'home'>): LedgerEntry {
  return { kind: 'pm2_daemon', ref: layout.user, details: { shared: true, user: layout.user, home: layout.home } };
}

export interface Pm2Process {
  name: string;
  status: string;
}

/** The user's PM2 processes (`pm2 jlist`); empty when PM2 answers nothing parseable. */
export async function pm2Processes(ctx: StepContext, layout: SiteLayout): Promise<Pm2Process[]> {
  return (await pm2ProcessList(ctx, layout)) ?? [];
}

/**
 * The processes of the user's running daemon, or null when none runs. Asked without starting one:
 * any `pm2` command, `jlist` and `kill` included, starts the daemon when it is not running.
 * Throws when the daemon runs but its list cannot be read (never taken for "no processes").
 */
export async function runningPm2Processes(
  ctx: StepContext,
  layout: Pick<SiteLayout, 'user' | 'home'>,
): Promise<Pm2Process[] | null> {
  // ~/.pm2 is the user's: its pid file is read (and the pid asked) as the user.
  if ((await livePid(ctx, `${layout.home}/.pm2/pm2.pid`, { asUser: layout.user, cwd: '/' })) === null) return null;
  const list = await pm2ProcessList(ctx, layout);
  if (list === null) throw new StepError(`cannot read the PM2 process list of ${layout.user} (pm2 jlist)`);
  return list;
}

async function pm2ProcessList(ctx: StepContext, layout: Pick<SiteLayout, 'user' | 'home'>): Promise<Pm2Process[] | null> {
  const result = await run(ctx, ['pm2', 'jlist'], asSiteUser(layout));
  if (result.code !== 0) return null;
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
  return null;
}

export async function pm2(
  ctx: StepContext,
  layout: Pick<SiteLayout, 'user' | 'home'>,
  args: string[],
  what: string,
): Promise<void> {
  await mustRun(ctx, ['pm2', ...args], asSiteUser(layout), what);
}
