import type { ProvisionedSite, Step, StepContext } from '../step.js';
import { mustRun, StepError } from '../steps/commands.js';
import { dotenvValue } from '../templates/dotenv.js';
import { writeLaravelDotenv } from './laravel-dotenv.js';
import { appDirectory, ENV_FILE, RELEASE_ENTRY, renderCommandLauncher, renderLauncher, startOf } from './launcher.js';
import type { DeployPlan } from './plan.js';
import { activationOf, asUserIn, releasePaths } from './release-paths.js';

const KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * WRITE, as the site user: stdin into file $1 with mode $2, through a temporary file renamed over
 * it; the mode is set before any byte is written, so a secret is never readable by others.
 */
export const WRITE = `set -eu
umask 077
rm -f -- "$1.tmp"
cat > "$1.tmp"
chmod "$2" -- "$1.tmp"
mv -f -T -- "$1.tmp" "$1"`;

/**
 * WRITE_ENVIRONMENT, as the site user: stdin into $1 (0600) as WRITE does; with $2 and $3, the
 * text $3 into file $2 (0644) the same way.
 */
export const WRITE_ENVIRONMENT = `set -eu
umask 077
rm -f -- "$1.tmp"
cat > "$1.tmp"
chmod 600 -- "$1.tmp"
mv -f -T -- "$1.tmp" "$1"
[ $# -ge 3 ] || exit 0
rm -f -- "$2.tmp"
printf '%s' "$3" > "$2.tmp"
chmod 644 -- "$2.tmp"
mv -f -T -- "$2.tmp" "$2"`;

export function renderEnvFile(runtime: Record<string, string>): string {
  const lines = Object.entries(runtime).map(([key, value]) => {
    if (!KEY.test(key)) throw new StepError(`environment variable name ${JSON.stringify(key)} is not valid`);
    try {
      return `${key}=${dotenvValue(value)}`;
    } catch (error) {
      // The reason names the key only: the value is a secret.
      throw new StepError(`run-time variable ${key}: ${(error as Error).message}`);
    }
  });
  return lines.length === 0 ? '' : `${lines.join('\n')}\n`;
}

/**
 * The release's run-time variables in ENV_FILE (0600, the site user's; values never logged), for
 * Laravel in its `.env` too (laravel-dotenv.ts), and for process types the launcher PM2 runs (launcher.ts). Build-time variables are not written:
 * they reach the build and hooks on stdin only (user-command.ts).
 */
export function writeEnvironment(plan: DeployPlan): Step {
  return {
    name: 'write environment',
    async run(ctx: StepContext) {
      const paths = releasePaths(ctx.site, plan.release);
      const user = asUserIn(paths.layout, paths.dir);
      const content = renderEnvFile(plan.environment.runtime);
      // Process types: the launcher too, in the same round trip (it holds no secret: an argument).
      const launcher = activationOf(ctx.site) === 'process' ? [`${paths.dir}/${RELEASE_ENTRY}`, launcherOf(ctx.site, plan)] : [];
      await mustRun(
        ctx,
        ['sh', '-c', WRITE_ENVIRONMENT, 'sh', `${paths.dir}/${ENV_FILE}`, ...launcher],
        { ...user, stdin: content },
        `write ${ENV_FILE}`,
      );
      ctx.log(`wrote ${Object.keys(plan.environment.runtime).length} run-time variables to ${ENV_FILE} (mode 0600)`);
      if (ctx.site.type === 'laravel') await writeLaravelDotenv(ctx, ctx.site, plan);
      if (launcher.length === 0) return;
      ctx.log(`wrote ${RELEASE_ENTRY}, which PM2 runs in this release`);
    },
  };
}

/** Generic Port runs the user's start command; the other process types their framework's entry. */
function launcherOf(site: ProvisionedSite, plan: DeployPlan): string {
  const appDir = appDirectory(site, plan.artifactPath);
  if (site.type !== 'generic-port') return renderLauncher(appDir, startOf(site));
  // The control plane refuses such a deploy; a setting reset while it was queued ends here.
  if (plan.startCommand === null) throw new StepError('no start command: set the deploy setting startCommand');
  return renderCommandLauncher(appDir, plan.startCommand);
}
