import { SITE_TYPES, type SiteTypeId } from '@siteplane/contract';
import type { ProvisionedSite, Recipe, Step } from '../step.js';
import { ensureDatabaseAndUser } from '../steps/database/ensure-database-and-user.js';
import { ensureDatabaseEngine } from '../steps/database/ensure-database-engine.js';
import { ensureNginx } from '../steps/ensure-nginx.js';
import { ensureNginxVhost } from '../steps/ensure-nginx-vhost.js';
import { ensureNode } from '../steps/ensure-node.js';
import { ensurePhp } from '../steps/ensure-php.js';
import { ensurePhpFpmPool } from '../steps/ensure-php-fpm-pool.js';
import { ensurePm2 } from '../steps/ensure-pm2.js';
import { ensurePm2Process, type ProcessCommand } from '../steps/ensure-pm2-process.js';
import { ensureSiteDirectory, type Placeholder } from '../steps/ensure-site-directory.js';
import { ensureSystemUser } from '../steps/ensure-system-user.js';
import { removalSteps } from './removal.js';

/**
 * The shapes recipes share. Recipes never throw while listing steps (the job runner builds the
 * list before it starts journaling); anything wrong with the site is reported by the step that
 * needs it.
 */
function databaseSteps(site: ProvisionedSite): Step[] {
  return site.database ? [ensureDatabaseEngine(), ensureDatabaseAndUser()] : [];
}

/** PHP types: PHP and its pool; `appSteps` put the application's files into the release. */
export function phpRecipe(
  type: SiteTypeId,
  placeholder: Placeholder,
  appSteps: (site: ProvisionedSite) => Step[] = () => [],
): Recipe {
  return {
    type,
    create: (site) => {
      const php = site.runtime.php?.version;
      return [
        ensureSystemUser(),
        ensureNginx(),
        ensurePhp(php),
        ...databaseSteps(site),
        ensureSiteDirectory(placeholder),
        ...appSteps(site),
        ensurePhpFpmPool(php),
        ensureNginxVhost(),
      ];
    },
    remove: (_site, options) =>
      removalSteps(options, { phpPool: true, pm2: false, database: SITE_TYPES[type].database !== 'none' }),
  };
}

/**
 * Node process types: Node, PM2, the site's process (a placeholder app until the first
 * deployment, or the framework `appSteps` installed), proxied by nginx.
 */
export function nodeProcessRecipe(
  type: SiteTypeId,
  command: (site: ProvisionedSite) => ProcessCommand,
  appSteps: (site: ProvisionedSite) => Step[] = () => [],
): Recipe {
  return {
    type,
    create: (site) => [
      ensureSystemUser(),
      ensureNginx(),
      ensureNode(),
      ensurePm2(),
      ...databaseSteps(site),
      ensureSiteDirectory({ kind: 'node-app' }),
      ...appSteps(site),
      ensurePm2Process(command(site)),
      ensureNginxVhost(),
    ],
    remove: (_site, options) =>
      removalSteps(options, { phpPool: false, pm2: true, database: SITE_TYPES[type].database !== 'none' }),
  };
}

/** Types nginx serves from a directory; Node-built ones get Node for their build command. */
export function staticRecipe(type: SiteTypeId, placeholder: Placeholder, withNode: boolean): Recipe {
  return {
    type,
    create: () => [
      ensureSystemUser(),
      ensureNginx(),
      ...(withNode ? [ensureNode()] : []),
      ensureSiteDirectory(placeholder),
      ensureNginxVhost(),
    ],
    remove: (_site, options) => removalSteps(options, { phpPool: false, pm2: false, database: false }),
  };
}

/** Generic Port: nginx in front of a process the owner runs on the site's port. */
export function proxyOnlyRecipe(type: SiteTypeId): Recipe {
  return {
    type,
    create: () => [ensureSystemUser(), ensureNginx(), ensureSiteDirectory({ kind: 'none' }), ensureNginxVhost()],
    // PM2: a deploy gives the site a process running the user's start command (deploy/user-process.ts).
    remove: (_site, options) => removalSteps(options, { phpPool: false, pm2: true, database: false }),
  };
}
