import { ensureWordPressFiles } from '../steps/wordpress/ensure-wordpress-files.js';
import { ensureWpConfig } from '../steps/wordpress/ensure-wp-config.js';
import { installWordPress } from '../steps/wordpress/install-wordpress.js';
import { phpRecipe } from './builders.js';

/**
 * WordPress: PHP, its MySQL/MariaDB database, WordPress's files (settings.wordpressSource),
 * wp-config.php, and — with performInstallSetup — the installer run through php-cli.
 */
export const wordpressRecipe = phpRecipe('wordpress', { kind: 'none' }, (site) => [
  ensureWordPressFiles(),
  ensureWpConfig(),
  ...(site.options.performInstallSetup === false ? [] : [installWordPress(site.runtime.php?.version)]),
]);
