/**
 * PHP_SOURCE: where PHP versions a server lacks come from. `sury` (default): the distribution's own
 * PHP when it is the version asked for, else Ondřej Surý's repository (as Forge and Ploi do).
 * `distribution`: only the PHP the server's distribution ships (servers that reach only their
 * distribution's mirror); any other version is refused at create time.
 */
export const PHP_SOURCES = ['sury', 'distribution'] as const;
export type PhpSource = (typeof PHP_SOURCES)[number];

/** The PHP each distribution ships in its own repository, by the facts' `os` (`debian 12`). */
const DISTRIBUTION_PHP: Readonly<Record<string, string>> = {
  'debian 11': '7.4',
  'debian 12': '8.2',
  'debian 13': '8.4',
  'ubuntu 22.04': '8.1',
  'ubuntu 24.04': '8.3',
};

export function distributionPhp(os: string | null | undefined): string | null {
  return (os && DISTRIBUTION_PHP[os.toLowerCase()]) || null;
}
