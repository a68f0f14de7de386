import type { StepContext } from '../step.js';
import { aptInstall, installedPackages } from './apt.js';
import { AS_ROOT, mustRun, run, StepError } from './commands.js';
import { requirePhpVersion } from './site-layout.js';

/**
 * WORDPRESS_SOURCE / PHPMYADMIN_SOURCE `debian`: Debian's own package of the application, whose
 * tree then is the directory source copyAppFiles copies for the site. For servers that reach
 * Debian's mirror but not wordpress.org or files.phpmyadmin.net.
 */
export interface DebianAppPackage {
  what: string;
  /** The package's application tree. */
  directory: string;
  /** What to install for a site on PHP `php`. */
  packages(php: string): string[];
  /** debconf answers given before the install (one `owner question type value` per line). */
  preseed?: string;
}

export const DEBIAN_WORDPRESS: DebianAppPackage = {
  what: 'WordPress',
  directory: '/usr/share/wordpress',
  // wordpress Depends on `libapache2-mod-php | php` and apt takes the first alternative unless
  // another is installed: `php<v>` (which Provides php and is satisfied by php<v>-fpm) keeps
  // Apache out. Its `apache2 | httpd` is nginx's (Provides httpd). The default theme is only a
  // Recommends, but WordPress renders nothing without one.
  packages: (php) => ['wordpress', 'wordpress-theme-twentytwentythree', `php${php}`],
};

export const DEBIAN_PHPMYADMIN: DebianAppPackage = {
  what: 'phpMyAdmin',
  directory: '/usr/share/phpmyadmin',
  packages: () => ['phpmyadmin'],
  // The site gets its own user and configuration: dbconfig must create no database or user, and
  // no web server is to be configured for /phpmyadmin.
  preseed:
    'phpmyadmin phpmyadmin/dbconfig-install boolean false\n' + 'phpmyadmin phpmyadmin/reconfigure-webserver multiselect \n',
};

const APT_ENV = { DEBIAN_FRONTEND: 'noninteractive' };
const APACHE = /^Inst (apache2|apache2-bin|libapache2-mod-php\S*) /gm;

/** Installs the package (once per server, under the packages lock) and returns its tree. */
export async function ensureDebianAppPackage(ctx: StepContext, app: DebianAppPackage): Promise<string> {
  const names = app.packages(requirePhpVersion(ctx.site.runtime.php?.version));
  await ctx.withServerLock('packages', async () => {
    const present = await installedPackages(ctx, names);
    const missing = names.filter((name) => !present.has(name));
    if (missing.length === 0) {
      ctx.log(`Debian's ${names.join(' ')} is installed`);
      return;
    }
    if (app.preseed) {
      await mustRun(ctx, ['debconf-set-selections'], { ...AS_ROOT, stdin: app.preseed }, `preseed ${app.what}'s questions`);
    }
    await refuseApache(ctx, missing, app.what);
    await aptInstall(ctx, missing);
  });
  return app.directory;
}

/**
 * Apache beside nginx would take port 80 where systemd starts it. apt's own plan (`-s`: nothing is
 * changed) shows whether the package would bring it; a plan apt cannot make yet (package lists not
 * read) is left to the install, which reports that itself.
 */
async function refuseApache(ctx: StepContext, names: string[], what: string): Promise<void> {
  const plan = await run(ctx, ['apt-get', 'install', '-s', '-q', '--no-install-recommends', ...names], {
    ...AS_ROOT,
    env: APT_ENV,
  });
  if (plan.code !== 0) return;
  const apache = [...plan.stdout.matchAll(APACHE)].map((match) => match[1]);
  if (apache.length > 0) {
    throw new StepError(`installing Debian's ${what} would also install ${apache.join(', ')}; Siteplane serves it with nginx`);
  }
}
