import { type AccountFacts, parseAccount } from '../domain/servers/privileged-accounts.js';
import type { Executor } from './executor.js';

/**
 * The account's passwd line and group names in one round trip, NUL-separated. getent also sees
 * NSS (LDAP) accounts, which /etc/passwd would miss. A missing account answers nothing.
 */
export const READ_ACCOUNT_SCRIPT = `e=$(getent passwd -- "$1") || exit 0
printf '%s\\0%s\\0' "$e" "$(id -Gn -- "$1")"`;

/** The account's uid and groups on the server, or null when there is no such account. */
export async function readAccount(exec: Executor, username: string): Promise<AccountFacts | null> {
  const result = await exec.run(['sh', '-c', READ_ACCOUNT_SCRIPT, 'sh', username]);
  if (result.code !== 0) throw new Error(`could not read the account ${username}: ${result.stderr.trim()}`);
  const [entry = '', groups = ''] = result.stdout.split('\0');
  return parseAccount(entry, groups);
}
