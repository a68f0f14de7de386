import type { Step, StepContext } from '../../step.js';
import { copyAppFiles } from '../app-source.js';
import { pathKind, removeFile } from '../remote-files.js';
import { siteLayout } from '../site-layout.js';

/**
 * WordPress's files in the first release, from settings.wordpressSource. A source's own
 * wp-config.php (Debian's loads /etc/wordpress/config-<host>.php) is removed before the copy goes
 * live (see copyAppFiles), so a resumed job never finds the source's one: the next step writes the
 * site's own.
 */
export function ensureWordPressFiles(): Step {
  return {
    name: 'ensure WordPress files',
    async run(ctx: StepContext) {
      const layout = siteLayout(ctx.site);
      const release = layout.initialRelease;
      if ((await pathKind(ctx, `${release}/wp-settings.php`)) !== null) {
        ctx.log('WordPress files are in place');
        return;
      }
      await copyAppFiles(ctx, ctx.settings.wordpressSource, release, layout.user, 'WordPress', async (stage) => {
        if ((await pathKind(ctx, `${stage}/wp-config.php`)) !== null) await removeFile(ctx, `${stage}/wp-config.php`);
      });
    },
  };
}
