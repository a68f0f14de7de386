import { existsSync } from 'node:fs';
import { describe, it } from 'vitest';
import { HOSTILE_VALUES } from './support/hostile.js';
import {
  checkPhpMyAdminPassword,
  checkPoolUnderFpm,
  checkVhostsUnderNginx,
  checkWpConfigPassword,
  checkWpInstallScript,
  thisMachine,
} from './support/real-config-checks.js';

/**
 * The rendered files checked by the real programs, where this machine has them (Debian's nginx,
 * php8.2-fpm and php8.2-cli): `nginx -t`, `php-fpm8.2 -t`, `php -l`, and PHP reading back the
 * escaped passwords. CI's machine has none of them: there the same checks run on the pristine test
 * host once Siteplane has installed nginx and PHP on it (fresh/site-types.test.ts).
 */
const has = (path: string) => existsSync(path);

describe.skipIf(!has('/usr/sbin/nginx'))('rendered vhosts under the real nginx -t', () => {
  it('accepts the vhost of every site type, with and without TLS', () => checkVhostsUnderNginx(thisMachine));
});

describe.skipIf(!has('/usr/sbin/php-fpm8.2'))('the rendered pool under the real php-fpm -t', () => {
  it('is a valid pool', () => checkPoolUnderFpm(thisMachine));
});

describe.skipIf(!has('/usr/bin/php8.2'))('rendered PHP files under the real php', () => {
  it.each(HOSTILE_VALUES)('wp-config.php gives WordPress the password %j unchanged', (password) =>
    checkWpConfigPassword(thisMachine, password),
  );

  it.each(HOSTILE_VALUES)('config.inc.php gives phpMyAdmin the control password %j unchanged', (password) =>
    checkPhpMyAdminPassword(thisMachine, password),
  );

  it('the WordPress installer script is valid PHP and carries its data intact', () => checkWpInstallScript(thisMachine));
});
