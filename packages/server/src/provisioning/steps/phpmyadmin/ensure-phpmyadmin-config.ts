import type { Step, StepContext } from '../../step.js';
import { renderPhpMyAdminConfig } from '../../templates/phpmyadmin-config.js';
import { mustRun, StepError } from '../commands.js';
import { kindOf, modeOf, probe } from '../probe.js';
import { siteLayout } from '../site-layout.js';

/** Only the site's user (and its FPM pool, which runs as that user) reads the control password and blowfish secret. */
const CONFIG_MODE = '600';

/**
 * config.inc.php: cookie login against the local MySQL/MariaDB, the `phpmyadmin` account (which
 * holds no rights) as the control user, a fresh blowfish secret. Written once (a new secret would
 * invalidate sessions), by the site's user into the user's own release, mode 0600: root never
 * writes into a tree that user controls, and no other account (www-data, other site users) reads
 * it. A file an earlier version left group-readable is narrowed.
 */
export function ensurePhpMyAdminConfig(): Step {
  return {
    name: 'ensure phpMyAdmin config.inc.php',
    async run(ctx: StepContext) {
      const layout = siteLayout(ctx.site);
      const path = `${layout.initialRelease}/config.inc.php`;
      const asOwner = { asUser: layout.user };
      const [kind, mode] = await probe(ctx, [kindOf(path), modeOf(path)], asOwner);
      if (kind === null) {
        const db = ctx.site.database;
        if (!db) throw new StepError('a phpMyAdmin site needs its database user; the site has none');
        const content = renderPhpMyAdminConfig({
          controlUser: db.user,
          controlPassword: db.password,
          tempDir: `${layout.current}/tmp`,
        });
        // umask 077: the file is never readable by others, not even between dd and chmod.
        await mustRun(ctx, ['dd', `of=${path}`, 'status=none'], { ...asOwner, stdin: content, umask: '077' }, `write ${path}`);
        ctx.log(`wrote ${path}`);
      } else if (kind !== 'file') {
        throw new StepError(`${path} is a ${kind}, not the configuration file phpMyAdmin reads`);
      } else if (mode === CONFIG_MODE) {
        ctx.log(`${path} is in place`);
        return;
      }
      await mustRun(ctx, ['chmod', `0${CONFIG_MODE}`, '--', path], asOwner, `restrict ${path}`);
      if (kind !== null) ctx.log(`restricted ${path} to its owner (mode ${CONFIG_MODE})`);
    },
  };
}
