import type { Step, StepContext } from '../../step.js';
import { copyAppFiles, DEBIAN_SOURCE } from '../app-source.js';
import { mustRun, StepError } from '../commands.js';
import { DEBIAN_PHPMYADMIN, ensureDebianAppPackage } from '../debian-app-package.js';
import { pathKind, readFile } from '../remote-files.js';
import { siteLayout } from '../site-layout.js';

/**
 * phpMyAdmin's files in the first release, from settings.phpmyadminSource (`debian`: Debian's
 * package, installed first), with a private tmp/ directory. Debian's tree reads its configuration
 * from /etc/phpmyadmin and caches in /var/lib/phpmyadmin (libraries/vendor_config.php); the copy
 * is pointed back at its own root so that this site's config.inc.php is the one used. Upstream
 * trees already are. The release is the user's: everything in it runs as that user.
 */
export function ensurePhpMyAdminFiles(): Step {
  return {
    name: 'ensure phpMyAdmin files',
    async run(ctx: StepContext) {
      const layout = siteLayout(ctx.site);
      const release = layout.initialRelease;
      const asOwner = { asUser: layout.user };
      if ((await pathKind(ctx, `${release}/index.php`, asOwner)) === null) {
        const configured = ctx.settings.phpmyadminSource;
        const source = configured === DEBIAN_SOURCE ? await ensureDebianAppPackage(ctx, DEBIAN_PHPMYADMIN) : configured;
        await copyAppFiles(ctx, source, release, layout.user, 'phpMyAdmin');
      } else ctx.log('phpMyAdmin files are in place');
      const tmp = `${release}/tmp`;
      if ((await pathKind(ctx, tmp, asOwner)) === null) {
        await mustRun(ctx, ['mkdir', '-m', '0700', '--', tmp], asOwner, `create ${tmp}`);
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
  const asOwner = { asUser: user };
  const text = await readFile(ctx, path, asOwner);
  if (text === null || text === '') return;
  if (!CONFIG_FILE.test(text)) {
    throw new StepError(
      `${path} has no 'configFile' entry; this phpMyAdmin source is not a 5.2 tree Siteplane knows how to configure`,
    );
  }
  const patched = patchVendorConfig(text);
  if (patched === text) return;
  // dd truncates and rewrites the user's own file in place, as that user.
  await mustRun(ctx, ['dd', `of=${path}`, 'status=none'], { ...asOwner, stdin: patched }, `write ${path}`);
  ctx.log(`pointed ${path} at the site's own config.inc.php and tmp/`);
}
