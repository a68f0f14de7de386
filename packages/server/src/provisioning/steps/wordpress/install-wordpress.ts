import type { Step, StepContext } from '../../step.js';
import { renderWpInstallScript } from '../../templates/wp-install-script.js';
import { mustRun, StepError } from '../commands.js';
import { asSiteUser } from '../pm2.js';
import { requirePhpVersion, siteLayout } from '../site-layout.js';

interface AdminSetup {
  title: string;
  adminUser: string;
  adminEmail: string;
}

/**
 * Runs WordPress's installer (performInstallSetup) with php-cli as the site user: a script on
 * stdin calls wp_install() with wpAdminSetup and the admin password. Chosen over POSTing to
 * wp-admin/install.php through nginx because it needs neither nginx, FPM nor DNS to be working
 * yet, keeps the password out of any HTTP request and access log, and reports a real exit status.
 * wp-cli is not packaged for Debian. A second run finds WordPress installed and changes nothing.
 */
export function installWordPress(phpVersion: string | undefined): Step {
  return {
    name: 'run the WordPress installer',
    async run(ctx: StepContext) {
      const layout = siteLayout(ctx.site);
      const setup = adminSetup(ctx.site.options.wpAdminSetup);
      const password = ctx.site.secrets.wpAdminPassword;
      if (!password) throw new StepError('the WordPress admin password is missing (wpAdminSetup.adminPassword)');
      const scheme = ctx.site.ssl.enabled ? 'https' : 'http';
      const script = renderWpInstallScript({
        root: layout.current,
        siteUrl: `${scheme}://${layout.domain}`,
        host: layout.domain,
        title: setup.title,
        adminUser: setup.adminUser,
        adminEmail: setup.adminEmail,
        adminPassword: password,
      });
      const result = await mustRun(
        ctx,
        [`php${requirePhpVersion(phpVersion)}`],
        { ...asSiteUser(layout, layout.current), stdin: script },
        'install WordPress',
      );
      ctx.log(
        result.stdout.includes('already installed')
          ? 'WordPress is installed'
          : `installed WordPress; admin user ${setup.adminUser}`,
      );
    },
  };
}

function adminSetup(value: unknown): AdminSetup {
  const setup = (value ?? {}) as Partial<Record<keyof AdminSetup, unknown>>;
  const field = (name: keyof AdminSetup) => {
    const v = setup[name];
    if (typeof v !== 'string' || v === '') throw new StepError(`wpAdminSetup.${name} is missing`);
    return v;
  };
  return { title: field('title'), adminUser: field('adminUser'), adminEmail: field('adminEmail') };
}
