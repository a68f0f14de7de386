import { hostnameProblem } from '../../domain/hostnames.js';
import type { ProvisionedSite } from '../step.js';
import { StepError } from './commands.js';

/**
 * Where a site lives on its server (ARCHITECTURE §3 "Layout on the server"), computed in one place
 * so steps, removal, deployments and TLS agree. Every value that becomes part of a path is checked
 * again here, whatever validated it before: a path built from a bad value is never used.
 */
const SYSTEM_USER = /^[a-z_][a-z0-9_-]{0,31}$/;
const RELATIVE_PATH = /^[A-Za-z0-9._\-/]{0,255}$/;
const PHP_VERSION = /^\d\.\d$/;

/** The first release, created before any deployment; deployments add their own beside it. */
export const INITIAL_RELEASE = 'initial';

/**
 * The group nginx's workers run in (Debian's `www-data`). Homes (0710) and site roots (0750) belong
 * to it, so nginx reaches a site's files while other site users, in none of these groups, do not.
 */
export const NGINX_GROUP = 'www-data';

/** The user nginx's workers run as (Debian's `www-data`): whose view of a site's files is the one visitors get. */
export const NGINX_USER = 'www-data';

/** Where nginx serves HTTP-01 challenge files from; the TLS module writes tokens below it. */
export const ACME_ROOT = '/var/lib/siteplane/acme';

export function checkSystemUser(user: string): string {
  if (!SYSTEM_USER.test(user)) throw new StepError(`system user ${JSON.stringify(user)} is not a valid Linux user name`);
  return user;
}

export function checkDomain(domain: string): string {
  const problem = hostnameProblem(domain);
  if (problem) throw new StepError(`domain ${JSON.stringify(domain)} ${problem}`);
  return domain;
}

/** A directory below the site's release (webDirectory, artifactPath): relative, no `..`, no odd characters. */
export function checkRelativePath(value: string, what: string): string {
  const clean = value.replace(/\/+$/, '');
  if (
    !RELATIVE_PATH.test(clean) ||
    clean.startsWith('/') ||
    clean.split('/').some((segment) => segment === '..' || segment === '.' || (segment === '' && clean !== ''))
  ) {
    throw new StepError(`${what} ${JSON.stringify(value)} must be a relative path of letters, digits, . _ - and /`);
  }
  return clean;
}

export function checkPhpVersion(version: string): string {
  if (!PHP_VERSION.test(version)) throw new StepError(`PHP version ${JSON.stringify(version)} is not of the form X.Y`);
  return version;
}

/** The PHP version a step was built with; a PHP site without one is a planning bug, reported by the step. */
export function requirePhpVersion(version: string | undefined): string {
  if (version === undefined) throw new StepError('the site has no PHP version in its runtime plan');
  return checkPhpVersion(version);
}

export interface SiteLayout {
  user: string;
  domain: string;
  home: string;
  /** /home/<user>/<domain> */
  root: string;
  releases: string;
  initialRelease: string;
  /** Symlink to the live release; nginx and PM2 use it through $realpath_root / cwd. */
  current: string;
  /** Files that survive deployments (.env, uploads). */
  shared: string;
  ecosystem: string;
  acmeDir: string;
  vhost: string;
  vhostEnabled: string;
  accessLog: string;
  errorLog: string;
}

export function siteLayout(site: Pick<ProvisionedSite, 'user' | 'domain'>): SiteLayout {
  const user = checkSystemUser(site.user);
  const domain = checkDomain(site.domain);
  const home = `/home/${user}`;
  const root = `${home}/${domain}`;
  return {
    user,
    domain,
    home,
    root,
    releases: `${root}/releases`,
    initialRelease: `${root}/releases/${INITIAL_RELEASE}`,
    current: `${root}/current`,
    shared: `${root}/shared`,
    ecosystem: `${root}/ecosystem.config.cjs`,
    acmeDir: `${ACME_ROOT}/${domain}`,
    vhost: `/etc/nginx/sites-available/${domain}.conf`,
    vhostEnabled: `/etc/nginx/sites-enabled/${domain}.conf`,
    accessLog: `/var/log/nginx/${domain}.access.log`,
    errorLog: `/var/log/nginx/${domain}.error.log`,
  };
}

/** `<base>/<relative>` without a trailing slash when relative is empty. */
export function below(base: string, relative: string | undefined, what: string): string {
  if (relative === undefined || relative === '') return base;
  const clean = checkRelativePath(relative, what);
  return clean === '' ? base : `${base}/${clean}`;
}

export interface FpmPoolLayout {
  version: string;
  user: string;
  /** /home/<user>: every PHP site of the user lies below it, and the pool's open_basedir is it. */
  home: string;
  /** /home/<user>/.siteplane (0700): the pool's own directories, out of other users' reach. */
  privateDir: string;
  /** PHP's temporary files (sys_temp_dir, upload_tmp_dir, TMPDIR) instead of the shared /tmp. */
  tmpDir: string;
  /** PHP's session files instead of the shared /var/lib/php/sessions. */
  sessionDir: string;
  file: string;
  socket: string;
  /** The master's pid file, as Debian's php-fpm.conf sets it. */
  pidFile: string;
  mainConfig: string;
  binary: string;
}

/** One pool per user and PHP version, shared by that user's sites (ARCHITECTURE §3). */
export function fpmPoolLayout(user: string, phpVersion: string): FpmPoolLayout {
  const version = checkPhpVersion(phpVersion);
  const name = checkSystemUser(user);
  // pool.d/www.conf is Debian's default pool: a user named www must not overwrite (or later delete) it.
  if (name === 'www')
    throw new StepError('the system user "www" would replace Debian\'s default PHP-FPM pool; choose another user name');
  const privateDir = `/home/${name}/.siteplane`;
  return {
    version,
    user: name,
    home: `/home/${name}`,
    privateDir,
    tmpDir: `${privateDir}/tmp`,
    sessionDir: `${privateDir}/sessions`,
    file: `/etc/php/${version}/fpm/pool.d/${name}.conf`,
    socket: `/run/php/php${version}-fpm-${name}.sock`,
    pidFile: `/run/php/php${version}-fpm.pid`,
    mainConfig: `/etc/php/${version}/fpm/php-fpm.conf`,
    binary: `php-fpm${version}`,
  };
}

/** Options of a site as strings, or undefined; the stored options are already validated. */
export function stringOption(site: ProvisionedSite, name: string): string | undefined {
  const value = site.options[name];
  return typeof value === 'string' ? value : undefined;
}

export function numberOption(site: ProvisionedSite, name: string): number | undefined {
  const value = site.options[name];
  return typeof value === 'number' ? value : undefined;
}

export function sitePort(site: ProvisionedSite): number {
  const port = site.port;
  if (port === null || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new StepError(`site ${site.domain} has no valid port (got ${String(port)}); its process cannot be proxied`);
  }
  return port;
}

/** Lock name that serialises creating and removing one shared pool. */
export function poolLock(pool: FpmPoolLayout): string {
  return `php-fpm-pool:${pool.version}:${pool.user}`;
}
