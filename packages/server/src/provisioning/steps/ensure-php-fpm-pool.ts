import type { Step, StepContext } from '../step.js';
import { renderFpmPool } from '../templates/php-fpm-pool.js';
import { mustRun } from './commands.js';
import { installConfigFile } from './config-file.js';
import { recordOnce } from './ledger.js';
import { hashOf, livePidOf, modeOf, probe } from './probe.js';
import { ROOT_FILE, sha256 } from './remote-files.js';
import { phpFpmTest, reloadPhpFpm } from './services.js';
import { type FpmPoolLayout, fpmPoolLayout, poolLock, requirePhpVersion } from './site-layout.js';

/**
 * The pool's private directories, made by its user (never root: they lie in the user's home):
 * $1 ~/.siteplane, $2 its tmp/, $3 its sessions/, all 0700 — umask 077 for what mkdir makes, chmod
 * for what was there with another mode.
 */
export const POOL_DIRECTORIES = `umask 077
mkdir -p -- "$2" "$3" && chmod 0700 -- "$1" "$2" "$3"`;

/**
 * The PHP-FPM pool of the site's user and PHP version. Shared: every site of that user and version
 * records it (details.shared), and removal deletes it only when no other site still uses it. The
 * pool lock serialises this step with that removal, so a pool is never deleted under a site that
 * is just being created.
 */
export function ensurePhpFpmPool(phpVersion: string | undefined): Step {
  return {
    name: 'ensure PHP-FPM pool',
    async run(ctx: StepContext) {
      const pool = fpmPoolLayout(ctx.site.user, requirePhpVersion(phpVersion));
      await ctx.withServerLock(poolLock(pool), async () => {
        await recordOnce(ctx, {
          kind: 'php_fpm_pool',
          ref: pool.file,
          details: { shared: true, user: pool.user, phpVersion: pool.version, socket: pool.socket },
        });
        const content = renderFpmPool({
          user: pool.user,
          phpVersion: pool.version,
          socket: pool.socket,
          home: pool.home,
          tmpDir: pool.tmpDir,
          sessionDir: pool.sessionDir,
        });
        // The user's second site finds the pool in place and its master running: one round trip.
        const [hash, pid] = await probe(ctx, [hashOf(pool.file), livePidOf(pool.pidFile)]);
        // The user's own directories are looked at by the user (root never follows a path there),
        // and made before the pool goes live: its workers use them from the first request.
        const modes = await probe(ctx, [modeOf(pool.privateDir), modeOf(pool.tmpDir), modeOf(pool.sessionDir)], {
          asUser: pool.user,
        });
        if (modes.some((mode) => mode !== '700')) await makePoolDirectories(ctx, pool);
        const change =
          hash === sha256(content)
            ? 'unchanged'
            : await installConfigFile(ctx, { path: pool.file, content, ownership: ROOT_FILE, test: phpFpmTest(pool) });
        if (change === 'unchanged') ctx.log(`PHP-FPM pool ${pool.file} is in place`);
        else ctx.log(`${change === 'created' ? 'created' : 'updated'} PHP-FPM pool ${pool.file} (socket ${pool.socket})`);
        // Also (re)start a master that is not running, e.g. after a reboot without systemd.
        if (change !== 'unchanged' || !pid) await reloadPhpFpm(ctx, pool);
      });
    },
  };
}

async function makePoolDirectories(ctx: StepContext, pool: FpmPoolLayout): Promise<void> {
  await mustRun(
    ctx,
    ['sh', '-c', POOL_DIRECTORIES, 'sh', pool.privateDir, pool.tmpDir, pool.sessionDir],
    { asUser: pool.user },
    `create ${pool.user}'s PHP temp and session directories`,
  );
  ctx.log(`${pool.tmpDir} and ${pool.sessionDir} are ${pool.user}'s own (mode 0700)`);
}
