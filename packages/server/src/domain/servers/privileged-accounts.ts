/**
 * Which system accounts may own sites. A site owner runs the site's code and holds its files, so an
 * account that is more than an ordinary user would hand that power to whoever controls a site:
 * root, the account Siteplane itself logs in with (it can become root), system accounts (they own
 * daemons and their data: www-data reads every site, postgres owns every database) and members of
 * the groups that administer the machine (sudo, wheel, root; adm reads the system's logs).
 */

/** Groups whose members administer the server. */
export const PRIVILEGED_GROUPS: ReadonlySet<string> = new Set(['root', 'sudo', 'wheel', 'adm', 'admin']);

/** Below it, Debian (and most distributions) number system accounts (login.defs UID_MIN). */
export const FIRST_REGULAR_UID = 1000;
/** nobody: the kernel's overflow uid, above the regular range but nobody's own. */
const NOBODY_UID = 65534;

/**
 * Names that are system accounts on a Debian server or become one when a package installs (the
 * database engines, web servers, mail and cache daemons Siteplane or its sites bring), refused
 * without asking the server.
 */
// biome-ignore format: a word list
const SYSTEM_NAMES: ReadonlySet<string> = new Set([
  'root', 'daemon', 'bin', 'sys', 'sync', 'games', 'man', 'lp', 'mail', 'news', 'uucp', 'proxy',
  'www-data', 'backup', 'list', 'irc', 'gnats', 'nobody', '_apt', 'messagebus', 'sshd', 'syslog',
  'postgres', 'mysql', 'redis', 'memcache', 'nginx', 'apache', 'postfix', 'dnsmasq', 'tss',
  'polkitd', 'avahi', 'uuidd', 'tcpdump', 'ntp', 'chrony', 'statd', 'operator', 'adm', 'sudo', 'wheel',
]);

export interface AccountFacts {
  uid: number;
  /** Every group the account is in (`id -Gn`), its primary group included. */
  groups: readonly string[];
}

/** Why `username` may not own sites by its name alone (no server asked), or null. */
export function privilegedName(username: string, sshUser: string | null): string | null {
  const name = username.toLowerCase();
  if (sshUser !== null && name === sshUser.toLowerCase())
    return `"${username}" is the account Siteplane logs in to this server with; sites need an account of their own.`;
  if (SYSTEM_NAMES.has(name) || name.startsWith('systemd-'))
    return `"${username}" is a system account; sites need an ordinary user.`;
  return null;
}

/** Why the existing account may not own sites, or null. */
export function privilegedAccount(username: string, account: AccountFacts): string | null {
  if (account.uid < FIRST_REGULAR_UID || account.uid === NOBODY_UID)
    return `"${username}" is a system account (uid ${account.uid}); sites need an ordinary user.`;
  const groups = account.groups.filter((g) => PRIVILEGED_GROUPS.has(g));
  if (groups.length > 0)
    return `"${username}" is in the group ${groups.join(', ')}, which administers the server; sites need an ordinary user.`;
  return null;
}

/**
 * An account from `getent passwd` (one line, `name:x:uid:gid:…`) and `id -Gn` (group names), or
 * null when getent found none. An answer that cannot be read counts as privileged (uid 0), so an
 * unexpected server refuses instead of trusting.
 */
export function parseAccount(passwdLine: string, groupNames: string): AccountFacts | null {
  const line = passwdLine.trim();
  if (line === '') return null;
  const uidField = line.split(':')[2] ?? '';
  const uid = /^\d+$/.test(uidField) ? Number(uidField) : 0;
  return { uid, groups: groupNames.trim().split(/\s+/).filter(Boolean) };
}
