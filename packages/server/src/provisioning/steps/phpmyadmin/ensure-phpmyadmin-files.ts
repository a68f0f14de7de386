import type { Step, StepContext } from '../../step.js';
import { copyAppFiles } from '../app-source.js';
import { StepError } from '../commands.js';
import { makeDirectory, pathKind, readFile, writeFile } from '../remote-files.js';
import { siteLayout } from '../site-layout.js';

/**
 * phpMyAdmin's files in the first release, from settings.phpmyadminSource, with a private tmp/
 * directory. Debian's tree reads its configuration from /etc/phpmyadmin and caches in
 * /var/lib/phpmyadmin (libraries/vendor_config.php); the copy is pointed back at its own root so
 * that this site's config.inc.php is the one used. Upstream trees already are.
 */
export function ensurePhpMyAdminFiles(): Step {
  return {
    name: 'ensure phpMyAdmin files',
    async run(ctx: StepContext) {
      const layout = siteLayout(ctx.site);
      const release = layout.initialRelease;
      if ((await pathKind(ctx, `${release}/index.php`)) === null) {
        await copyAppFiles(ctx, ctx.settings.phpmyadminSource, release, layout.user, 'phpMyAdmin');
      } else ctx.log('phpMyAdmin files are in place');
      const tmp = `${release}/tmp`;
      if ((await pathKind(ctx, tmp)) === null) {
        await makeDirectory(ctx, tmp, { owner: layout.user, group: layout.user, mode: '0700' });
        ctx.log(`created ${tmp}`);
      }
      await ensureOwnConfigLocation(ctx, `${release}/libraries/vendor_config.php`, layout.user);
    },
  };
}

const CONFIG_FILE = /('configFile'\s*=>\s*)([^\n]*?),[ \t]*$/m;
const TEMP_DIR = /('tempDir'\s*=>\s*)([^\n]*?),[ \t]*$/m;
const OWN_CONFIG = "ROOT_PATH . 'config.inc.php'";
const OWN_TEMP = "ROOT_PATH . 'tmp' . DIRECTORY_SEPARATOR";

export function patchVendorConfig(text: string): string {
  return text.replace(CONFIG_FILE, `$1${OWN_CONFIG},`).replace(TEMP_DIR, `$1${OWN_TEMP},`);
}

async function ensureOwnConfigLocation(ctx: StepContext, path: string, user: string): Promise<void> {
  const text = await readFile(ctx, path);
  if (text === null || text === '') return;
  if (!CONFIG_FILE.test(text)) {
    throw new StepError(
      `${path} has no 'configFile' entry; this phpMyAdmin source is not a 5.2 tree Siteplane knows how to configure`,
    );
  }
  const patched = patchVendorConfig(text);
  if (patched === text) return;
  await writeFile(ctx, path, patched, { owner: user, group: user, mode: '0644' });
  ctx.log(`pointed ${path} at the site's own config.inc.php and tmp/`);
}
