import type { Step, StepContext } from '../../step.js';
import { renderWpConfig } from '../../templates/wp-config.js';
import { StepError } from '../commands.js';
import { pathKind } from '../remote-files.js';
import { siteLayout } from '../site-layout.js';
import { asOwner, writeUserFile } from '../user-files.js';

/**
 * wp-config.php with the site's database credentials and fresh salts, readable by the site user
 * only (PHP-FPM runs as that user). Written once: its salts must not change on a rerun, which
 * would log everyone out. Probed and written as the site user: the release is that user's tree.
 */
export function ensureWpConfig(): Step {
  return {
    name: 'ensure wp-config.php',
    async run(ctx: StepContext) {
      const layout = siteLayout(ctx.site);
      const path = `${layout.initialRelease}/wp-config.php`;
      if ((await pathKind(ctx, path, asOwner(layout.user))) !== null) {
        ctx.log(`${path} is in place`);
        return;
      }
      const db = ctx.site.database;
      if (!db?.name) throw new StepError('a WordPress site needs its database; the site has none');
      const content = renderWpConfig({ database: db.name, user: db.user, password: db.password, host: 'localhost' });
      await writeUserFile(ctx, { user: layout.user, path, content, mode: '0640' });
      ctx.log(`wrote ${path} with the database credentials and fresh salts`);
    },
  };
}
