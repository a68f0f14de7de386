import type { StepContext } from '../step.js';
import { run, StepError } from '../steps/commands.js';
import { type SiteLayout, sitePort } from '../steps/site-layout.js';
import { asUserIn } from './release-paths.js';

/**
 * HEALTH: asks $1 (curl with the options after $4) until it answers 2xx/3xx or $2 seconds passed
 * (counted in milliseconds: on a whole-second clock a 1 s check begun late in a second ended after
 * one request), every 0.1 s (a release just started answers within a few tenths: a longer pause is time lost), each request at most $3 s. Prints the last status (000: no answer). With $4 = live
 * the release already serves visitors: an answer that will not change by waiting (a 404, a 500)
 * fails at once, only "no answer yet" and 502-504 are asked again. With $4 = any, any answer is
 * enough (a process asked directly, when no health path is known: a rollback's). Run as the site
 * user: it reads no file.
 */
export const HEALTH = `url=$1 deadline=$(( $(date +%s%N) / 1000000 + $2 * 1000 )) each=$3 live=$4
shift 4
while :; do
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time "$each" "$@" "$url") || code=000
  case $live$code in
    any000) ;;
    any*|*2??|*3??) echo "$code"; exit 0 ;;
    *000|*502|*503|*504) ;;
    *) if [ "$live" = live ]; then echo "$code"; exit 1; fi ;;
  esac
  [ "$(( $(date +%s%N) / 1000000 ))" -lt "$deadline" ] || { echo "$code"; exit 1; }
  sleep 0.1
done`;

const PATH = /^\/[A-Za-z0-9._~!$&'()*+,;=:@%/?-]*$/;

export function checkHealthPath(path: string): string {
  if (!PATH.test(path)) throw new StepError(`health path ${JSON.stringify(path)} must start with / and hold URL characters only`);
  return path;
}

export interface HealthAnswer {
  ok: boolean;
  status: string;
}

/** How the site is asked through nginx on this server, as its visitors reach it (TLS on 443, not verified). */
export interface LiveCheck {
  path: string;
  url: string;
  seconds: number;
  /** At most this long per request. */
  each: number;
  /** curl's options: to this server's nginx (`--resolve`), or the Host for a process asked on its port. */
  options: string[];
  /** Where it asks, for the log: `through nginx`, `on the site's port N`. */
  via: string;
}

export function liveCheck(ctx: StepContext, layout: SiteLayout, path: string, timeoutSeconds: number): LiveCheck {
  const tls = ctx.site.ssl.enabled;
  return {
    ...bounds(path, timeoutSeconds),
    url: `${tls ? 'https' : 'http'}://${layout.domain}${checkHealthPath(path)}`,
    options: ['--resolve', `${layout.domain}:${tls ? 443 : 80}:127.0.0.1`, ...(tls ? ['-k'] : [])],
    via: 'through nginx',
  };
}

/** How the site's own process is asked on its port, past nginx (Generic Port behind its stand-in). */
export function processCheck(ctx: StepContext, layout: SiteLayout, path: string, timeoutSeconds: number): LiveCheck {
  const port = sitePort(ctx.site);
  return {
    ...bounds(path, timeoutSeconds),
    url: `http://127.0.0.1:${port}${checkHealthPath(path)}`,
    options: ['-H', `Host: ${layout.domain}`],
    via: `on the site's port ${port}`,
  };
}

/** A check's whole seconds (at least 1) and each request's (at most 10). */
function bounds(path: string, timeoutSeconds: number): Pick<LiveCheck, 'path' | 'seconds' | 'each'> {
  const seconds = Math.max(1, Math.ceil(timeoutSeconds));
  return { path, seconds, each: Math.min(seconds, 10) };
}

/** The site through nginx, once live (static and PHP sites; PM2 sites ask within GO_LIVE). */
export async function siteHealth(
  ctx: StepContext,
  layout: SiteLayout,
  path: string,
  timeoutSeconds: number,
): Promise<HealthAnswer> {
  const check = liveCheck(ctx, layout, path, timeoutSeconds);
  return ask(ctx, layout, check.url, timeoutSeconds, 'live', check.options);
}

async function ask(
  ctx: StepContext,
  layout: SiteLayout,
  url: string,
  timeoutSeconds: number,
  mode: 'live' | 'beside',
  options: string[],
): Promise<HealthAnswer> {
  const seconds = Math.max(1, Math.ceil(timeoutSeconds));
  const result = await run(
    ctx,
    ['sh', '-c', HEALTH, 'sh', url, String(seconds), String(Math.min(seconds, 10)), mode, ...options],
    {
      ...asUserIn(layout),
      timeoutMs: (seconds + 15) * 1000,
    },
  );
  const status = result.stdout.trim() || '000';
  return { ok: result.code === 0, status };
}
