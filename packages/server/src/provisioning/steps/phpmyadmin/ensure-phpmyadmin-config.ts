import type { Step, StepContext } from '../../step.js';
import { renderPhpMyAdminConfig } from '../../templates/phpmyadmin-config.js';
import { StepError } from '../commands.js';
import { pathKind, writeFile } from '../remote-files.js';
import { siteLayout } from '../site-layout.js';

/**
 * config.inc.php: cookie login against the local MySQL/MariaDB, the `phpmyadmin` account as the
 * control user, a fresh blowfish secret. Written once (a new secret would invalidate sessions).
 */
export function ensurePhpMyAdminConfig(): Step {
  return {
    name: 'ensure phpMyAdmin config.inc.php',
    async run(ctx: StepContext) {
      const layout = siteLayout(ctx.site);
      const path = `${layout.initialRelease}/config.inc.php`;
      if ((await pathKind(ctx, path)) !== null) {
        ctx.log(`${path} is in place`);
        return;
      }
      const db = ctx.site.database;
      if (!db) throw new StepError('a phpMyAdmin site needs its database user; the site has none');
      const content = renderPhpMyAdminConfig({
        controlUser: db.user,
        controlPassword: db.password,
        tempDir: `${layout.current}/tmp`,
      });
      await writeFile(ctx, path, content, { owner: layout.user, group: layout.user, mode: '0640' });
      ctx.log(`wrote ${path}`);
    },
  };
}
