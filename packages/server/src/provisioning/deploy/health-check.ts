import type { StepContext } from '../step.js';
import { run, StepError } from '../steps/commands.js';
import type { SiteLayout } from '../steps/site-layout.js';
import { asUserIn } from './release-paths.js';

/**
 * HEALTH: asks $1 (curl with the options after $4) until it answers 2xx/3xx or $2 seconds passed,
 * every 0.2 s, each request at most $3 s. Prints the last status (000: no answer). With $4 = live
 * the release already serves visitors: an answer that will not change by waiting (a 404, a 500)
 * fails at once, only "no answer yet" and 502-504 are asked again. Run as the site user: it reads
 * no file.
 */
export const HEALTH = `url=$1 deadline=$(( $(date +%s) + $2 )) each=$3 live=$4
shift 4
while :; do
  code=$(curl -s -o /dev/null -w '%{http_code}' --max-time "$each" "$@" "$url") || code=000
  case $code in
    2??|3??) echo "$code"; exit 0 ;;
    000|502|503|504) ;;
    *) if [ "$live" = live ]; then echo "$code"; exit 1; fi ;;
  esac
  [ "$(date +%s)" -lt "$deadline" ] || { echo "$code"; exit 1; }
  sleep 0.2
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

/** The site through nginx on this server, as its visitors reach it (TLS sites on 443, not verified). */
export async function siteHealth(
  ctx: StepContext,
  layout: SiteLayout,
  path: string,
  timeoutSeconds: number,
): Promise<HealthAnswer> {
  const tls = ctx.site.ssl.enabled;
  const url = `${tls ? 'https' : 'http'}://${layout.domain}${checkHealthPath(path)}`;
  const options = ['--resolve', `${layout.domain}:${tls ? 443 : 80}:127.0.0.1`, ...(tls ? ['-k'] : [])];
  return ask(ctx, layout, url, timeoutSeconds, 'live', options);
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
