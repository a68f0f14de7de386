import type { SiteTypeId } from '@siteplane/contract';

/**
 * What deploying means for each site type: whether it deploys at all, and the hooks, shared paths
 * and build command a site starts with. The one place a type's deploy knowledge lives (a new type
 * adds a row here). The user may change every hook (add, reorder, disable); fetch, build, activate
 * and prune are the platform's steps around them and are not hooks.
 */
export interface TypeDeployDefaults {
  hooks: { name: string; command: string; stage: 'after-fetch' | 'before-activate' | 'after-activate'; enabled: boolean }[];
  sharedPaths: { path: string; kind: 'file' | 'directory' }[];
  /** Used when the site's options have no buildCommand; null = nothing to build. */
  buildCommand: string | null;
  /** Default hooks a create option switches off when it is `false` (Laravel's `enableCache` → `caches`). */
  hookSwitches?: { hook: string; option: string }[];
  /**
   * The type runs the user's own start command (deploy setting `startCommand`), which a deploy
   * needs; other types start the way their framework does and do not take one.
   */
  startCommand?: 'required';
  /** When not DEFAULT_HEALTH_CHECK: the framework's own health route, and its slower start. */
  healthCheck?: { path: string; timeoutSeconds: number };
}

export type Deployability = { deployable: true; defaults: TypeDeployDefaults } | { deployable: false; reason: string };

/** Installs exactly what the lock file lists, without dev dependencies; a missing lock file fails the hook, saying so. */
const COMPOSER_FROM_LOCK_COMMAND =
  "test -f composer.lock || { echo 'composer.lock is missing: commit it so every release installs the same packages' >&2; exit 1; }\n" +
  'composer install --no-dev --no-interaction --prefer-dist --optimize-autoloader';
const COMPOSER_FROM_LOCK = {
  name: 'composer install',
  command: COMPOSER_FROM_LOCK_COMMAND,
  stage: 'after-fetch' as const,
  enabled: true,
};
/** The Node types' install hook; the deploy steps make its default command reuse the live dependencies (provisioning/deploy/reuse-node-modules.ts). */
export const NPM_CI = { name: 'npm ci', command: 'npm ci', stage: 'after-fetch' as const, enabled: true };

const node = (buildCommand: string | null): Deployability => ({
  deployable: true,
  defaults: { hooks: [NPM_CI], sharedPaths: [], buildCommand },
});

const TABLE: Record<SiteTypeId, Deployability> = {
  laravel: {
    deployable: true,
    defaults: {
      hooks: [
        COMPOSER_FROM_LOCK,
        // Opt-in: a migration run by surprise on a production database is the mistake to avoid.
        { name: 'migrations', command: 'php artisan migrate --force', stage: 'before-activate', enabled: false },
        {
          name: 'caches',
          command: 'php artisan config:cache && php artisan route:cache && php artisan view:cache',
          stage: 'before-activate',
          enabled: true,
        },
      ],
      sharedPaths: [
        { path: '.env', kind: 'file' },
        { path: 'storage', kind: 'directory' },
      ],
      hookSwitches: [{ hook: 'caches', option: 'enableCache' }],
      buildCommand: null,
    },
  },
  php: {
    deployable: true,
    defaults: {
      hooks: [
        // A PHP site without composer.json has nothing to install.
        { ...COMPOSER_FROM_LOCK, command: `if test -f composer.json; then\n${COMPOSER_FROM_LOCK_COMMAND}\nfi` },
      ],
      sharedPaths: [],
      buildCommand: null,
    },
  },
  adonis: node('npm run build'),
  'nuxt-ssr': node('npm run build'),
  'nuxt-static': node('npm run generate'),
  'next-ssr': node('npm run build'),
  'nodejs-ssr': node('npm run build --if-present'),
  'nodejs-static': node('npm run build'),
  'static-html': { deployable: true, defaults: { hooks: [], sharedPaths: [], buildCommand: null } },
  // The user's Strapi project replaces the one Siteplane installed; its secrets and database
  // settings (.env), uploads and SQLite file (.tmp) are the installed instance's, moved into shared/
  // by the first deploy (provisioning/deploy/adopt-installed-data.ts). Strapi migrates at start.
  strapi: {
    deployable: true,
    defaults: {
      hooks: [NPM_CI],
      sharedPaths: [
        { path: '.env', kind: 'file' },
        { path: 'public/uploads', kind: 'directory' },
        { path: '.tmp', kind: 'directory' },
      ],
      buildCommand: 'npm run build',
      // Strapi's own health route (204); its start, its schema sync included, takes tens of seconds on a small server.
      healthCheck: { path: '/_health', timeoutSeconds: 180 },
    },
  },
  // Directus: its configuration (keys, database, first admin) is the installed instance's
  // directus.config.json, moved into shared/ with its uploads; a SQLite database is in shared/ already.
  // Its system tables follow the version the lock file installs: migrated before activation.
  directus: {
    deployable: true,
    defaults: {
      hooks: [
        NPM_CI,
        {
          name: 'migrations',
          command: 'CONFIG_PATH="$PWD/directus.config.json" ./node_modules/.bin/directus database migrate:latest',
          stage: 'before-activate',
          enabled: true,
        },
      ],
      sharedPaths: [
        { path: 'directus.config.json', kind: 'file' },
        { path: 'uploads', kind: 'directory' },
      ],
      buildCommand: null,
      // Answers 200 only when Directus reaches its database and storage.
      healthCheck: { path: '/server/health', timeoutSeconds: 180 },
    },
  },
  // Whatever the repository holds: the user's hooks and build, then their start command under PM2.
  'generic-port': {
    deployable: true,
    defaults: { hooks: [], sharedPaths: [], buildCommand: null, startCommand: 'required' },
  },
  wordpress: {
    deployable: false,
    reason:
      'WordPress sites are installed and updated by Siteplane from WordPress releases; deploy themes and plugins through WordPress itself.',
  },
  phpmyadmin: {
    deployable: false,
    reason: 'phpMyAdmin is installed by Siteplane from its releases; there is no user code to deploy.',
  },
  soketi: {
    deployable: false,
    reason: 'Soketi is a server Siteplane installs and runs from npm; configure it, there is no user code to deploy.',
  },
};

export function deployabilityOf(type: SiteTypeId): Deployability {
  return TABLE[type];
}

/** The platform's own steps, in order; hooks run between them at their stage and may not take their names. */
export const PLATFORM_STEPS = ['fetch', 'build', 'activate', 'prune'] as const;

export const DEFAULT_KEEP_RELEASES = 5;
export const DEFAULT_HEALTH_CHECK = { path: '/', timeoutSeconds: 30 };

/** A hook that runs database migrations (a rollback warns when one ran since the target release). */
export function isMigrationHook(hook: { name: string; command: string }): boolean {
  return /migrat/i.test(hook.name) || /\bmigrate\b/.test(hook.command);
}
