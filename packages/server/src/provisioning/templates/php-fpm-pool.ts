/**
 * One PHP-FPM pool per system user and PHP version (ARCHITECTURE §3), shared by that user's PHP
 * sites: the workers run as the user, nginx (www-data) reaches them through a socket only it and
 * root may open. `ondemand` keeps an idle user's pool at zero processes.
 */
export interface FpmPoolInput {
  user: string;
  phpVersion: string;
  socket: string;
}

const NAME = /^[a-z_][a-z0-9_-]{0,31}$/;
const PATH = /^[A-Za-z0-9._\-/]+$/;

export function renderFpmPool(input: FpmPoolInput): string {
  if (!NAME.test(input.user)) throw new Error(`user ${JSON.stringify(input.user)} cannot name an FPM pool`);
  if (!PATH.test(input.socket)) throw new Error(`socket path ${JSON.stringify(input.socket)} is not safe`);
  return [
    `; Managed by Siteplane: the PHP ${input.phpVersion} pool of ${input.user}, shared by ${input.user}'s PHP sites.`,
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
    '',
  ].join('\n');
}
