import type { Step } from '../step.js';
import { removalStep } from '../steps/remove/removal-step.js';
import { removeDatabaseEntry } from '../steps/remove/remove-database.js';
import { removeNginxVhost } from '../steps/remove/remove-nginx-vhost.js';
import { removeSitePath } from '../steps/remove/remove-paths.js';
import { removePhpFpmPool } from '../steps/remove/remove-php-fpm-pool.js';
import { removePm2Process } from '../steps/remove/remove-pm2-process.js';
import { removePm2Daemon, removePm2Startup } from '../steps/remove/remove-user-pm2.js';

export interface RemovalNeeds {
  phpPool: boolean;
  pm2: boolean;
  database: boolean;
}

/**
 * Deletion, in the reverse of creation: the vhost first (nginx stops routing and no longer
 * references the certificate), then the certificate, the process, the user's PM2 boot unit and
 * daemon and the shared pool (each only if no other site uses it), the files, and the database and
 * user — dropped only with deleteDatabase. The system user stays (it belongs to the server user
 * record); DNS records are removed by the DNS module.
 */
export function removalSteps(options: { deleteDatabase: boolean }, needs: RemovalNeeds): Step[] {
  return [
    removalStep('remove nginx vhost', ['nginx_vhost'], removeNginxVhost),
    removalStep('remove TLS certificate', ['certificate'], removeSitePath),
    ...(needs.pm2
      ? [
          removalStep('remove PM2 process', ['pm2_process'], removePm2Process),
          removalStep('remove PM2 boot service', ['pm2_startup'], removePm2Startup),
          removalStep('stop PM2 daemon', ['pm2_daemon'], removePm2Daemon),
        ]
      : []),
    ...(needs.phpPool ? [removalStep('remove PHP-FPM pool', ['php_fpm_pool'], removePhpFpmPool)] : []),
    removalStep('remove site files', ['directory', 'file'], removeSitePath),
    ...(needs.database
      ? [
          removalStep(
            options.deleteDatabase ? 'remove database and user' : 'keep database and user',
            ['database', 'database_user'],
            removeDatabaseEntry(options.deleteDatabase),
          ),
        ]
      : []),
  ];
}
