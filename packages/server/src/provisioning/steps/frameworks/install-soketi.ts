import type { Step, StepContext } from '../../step.js';
import { randomSecret } from '../../templates/random-secret.js';
import {
  ensureReleaseDirectory,
  frameworkRelease,
  isComplete,
  isLive,
  makeLive,
  markInstalled,
  npm,
  readReleaseFile,
  writePrivate,
} from './framework-release.js';
import { ensureUwsReachable, explainSoketiInstallFailure } from './soketi-source.js';

/** Environment of the Soketi process (its default app's credentials), read by the PM2 step. */
export const SOKETI_ENV_FILE = 'soketi.env.json';

/**
 * Soketi 1.x from npm into releases/soketi, with its default app's id, key and secret generated
 * once (Soketi's own defaults are public). They stay in soketi.env.json for the owner to read.
 * Soketi's dependency uWebSockets.js is fetched from GitHub, not the npm registry: on a server
 * that cannot reach github.com this step fails at once, saying so (soketi-source.ts).
 */
export function installSoketi(): Step {
  return {
    name: 'install Soketi from npm',
    async run(ctx: StepContext) {
      const release = frameworkRelease(ctx.site, 'soketi');
      if (!(await isComplete(ctx, release))) {
        await ensureUwsReachable(ctx);
        await ensureReleaseDirectory(ctx, release);
        if ((await readReleaseFile(ctx, release, 'package.json')) === null) {
          await writePrivate(
            ctx,
            release,
            'package.json',
            `${JSON.stringify({ name: 'soketi-site', private: true }, null, 2)}\n`,
          );
        }
        await npm(ctx, release, ['install', '@soketi/soketi@1'], 'install @soketi/soketi@1').catch((error: unknown) => {
          throw explainSoketiInstallFailure(error);
        });
        ctx.log('installed @soketi/soketi@1 from npm');
        if ((await readReleaseFile(ctx, release, SOKETI_ENV_FILE)) === null) {
          const env = {
            SOKETI_DEFAULT_APP_ID: randomSecret(12),
            SOKETI_DEFAULT_APP_KEY: randomSecret(32),
            SOKETI_DEFAULT_APP_SECRET: randomSecret(48),
          };
          await writePrivate(ctx, release, SOKETI_ENV_FILE, `${JSON.stringify(env, null, 2)}\n`);
          ctx.log(`generated the Soketi app credentials (in ${release.dir}/${SOKETI_ENV_FILE})`);
        }
        await markInstalled(ctx, release);
      } else ctx.log('Soketi is installed');
      if (!(await isLive(ctx, release))) await makeLive(ctx, release);
    },
  };
}

export const SOKETI_PROCESS = {
  script: 'node_modules/@soketi/soketi/bin/server.js',
  args: ['start'],
  envFile: SOKETI_ENV_FILE,
  portVariable: 'SOKETI_PORT',
};
