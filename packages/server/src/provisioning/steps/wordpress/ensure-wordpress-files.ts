import type { Step, StepContext } from '../../step.js';
import { copyAppFiles, DEBIAN_SOURCE } from '../app-source.js';
import { mustRun } from '../commands.js';
import { DEBIAN_WORDPRESS, ensureDebianAppPackage } from '../debian-app-package.js';
import { pathKind } from '../remote-files.js';
import { siteLayout } from '../site-layout.js';

/**
 * WordPress's files in the first release, from settings.wordpressSource (`debian`: Debian's
 * package, installed first). A source's own wp-config.php (Debian's loads
 * /etc/wordpress/config-<host>.php) is removed before the copy goes live (see copyAppFiles), so a
 * resumed job never finds the source's one: the next step writes the site's own.
 */
export function ensureWordPressFiles(): Step {
  return {
    name: 'ensure WordPress files',
    async run(ctx: StepContext) {
      const layout = siteLayout(ctx.site);
      const release = layout.initialRelease;
      if ((await pathKind(ctx, `${release}/wp-settings.php`, { asUser: layout.user })) !== null) {
        ctx.log('WordPress files are in place');
        return;
      }
      const configured = ctx.settings.wordpressSource;
      const source = configured === DEBIAN_SOURCE ? await ensureDebianAppPackage(ctx, DEBIAN_WORDPRESS) : configured;
      await copyAppFiles(ctx, source, release, layout.user, 'WordPress', async (stage, asOwner) => {
        await mustRun(ctx, ['rm', '-f', '--', `${stage}/wp-config.php`], asOwner, "remove the source's wp-config.php");
      });
    },
  };
}
