import { ensurePhpMyAdminConfig } from '../steps/phpmyadmin/ensure-phpmyadmin-config.js';
import { ensurePhpMyAdminFiles } from '../steps/phpmyadmin/ensure-phpmyadmin-files.js';
import { phpRecipe } from './builders.js';

/** phpMyAdmin: PHP, the `phpmyadmin` MySQL/MariaDB user (no rights), phpMyAdmin's files and config.inc.php. */
export const phpmyadminRecipe = phpRecipe('phpmyadmin', { kind: 'none' }, () => [
  ensurePhpMyAdminFiles(),
  ensurePhpMyAdminConfig(),
]);
