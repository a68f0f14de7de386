/**
 * One PHP-FPM pool per system user and PHP version (ARCHITECTURE §3), shared by that user's PHP
 * sites: the workers run as the user, nginx (www-data) reaches them through a socket only it and
 * root may open. `ondemand` keeps an idle user's pool at zero processes.
 *
 * Confined to the user's own files: open_basedir is the user's home (all their sites) and
 * /usr/share/php (Debian's PHP libraries, on PHP's include_path, root's and read-only); temporary
 * files, uploads and sessions go to the user's own 0700 directories instead of the /tmp and
 * /var/lib/php/sessions every pool shares. php_admin_value: a script cannot change them. Debian's
 * cron job cleans only /var/lib/php/sessions, so PHP's own garbage collection cleans these.
 */
export interface FpmPoolInput {
  user: string;
  phpVersion: string;
  socket: string;
  home: string;
  tmpDir: string;
  sessionDir: string;
}

/** Read-only paths outside the home that PHP code may still open (include_path's /usr/share/php). */
export const SHARED_PHP_PATHS = ['/usr/share/php/'];

const NAME = /^[a-z_][a-z0-9_-]{0,31}$/;
const PATH = /^[A-Za-z0-9._\-/]+$/;

export function renderFpmPool(input: FpmPoolInput): string {
  if (!NAME.test(input.user)) throw new Error(`user ${JSON.stringify(input.user)} cannot name an FPM pool`);
  for (const path of [input.socket, input.home, input.tmpDir, input.sessionDir]) {
    // open_basedir separates paths with ':'; PATH admits none, nor spaces or quotes.
    if (!PATH.test(path)) throw new Error(`path ${JSON.stringify(path)} is not safe in a pool`);
  }
  // The trailing slash: /home/ann must not also open /home/anne.
  const openBasedir = [`${input.home.replace(/\/+$/, '')}/`, ...SHARED_PHP_PATHS].join(':');
  return [
    `; Managed by Siteplane: the PHP ${input.phpVersion} pool of ${input.user}, shared by ${input.user}'s PHP sites.`,
    // A deploy reloads FPM (USR2) to take the new release: with FPM's default of 0, the workers'
    // running requests were ended at once and nginx answered them 502. Workers now finish them
    // (up to 10 s); new requests wait in the socket's backlog meanwhile. A global setting, allowed in
    // an included file; every pool file states the same value, so it stays while any pool does.
    '[global]',
    'process_control_timeout = 10s',
    '',
    `[${input.user}]`,
    `user = ${input.user}`,
    `group = ${input.user}`,
    `listen = ${input.socket}`,
    'listen.owner = www-data',
    'listen.group = www-data',
    'listen.mode = 0660',
    'pm = ondemand',
    'pm.max_children = 10',
    'pm.process_idle_timeout = 10s',
    'pm.max_requests = 500',
    'catch_workers_output = yes',
    'php_admin_flag[log_errors] = on',
    `php_admin_value[open_basedir] = ${openBasedir}`,
    `php_admin_value[sys_temp_dir] = ${input.tmpDir}`,
    `php_admin_value[upload_tmp_dir] = ${input.tmpDir}`,
    `php_admin_value[session.save_path] = ${input.sessionDir}`,
    'php_admin_value[session.gc_probability] = 1',
    `env[TMPDIR] = ${input.tmpDir}`,
    '',
  ].join('\n');
}
