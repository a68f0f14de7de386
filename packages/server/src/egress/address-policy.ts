/**
 * Which addresses a tenant-chosen target may have (a server's address, a VC profile's baseUrl, a
 * git remote, an owned-zone A record's value). Public addresses always; any other address only
 * when the operator lists a range holding it (SITEPLANE_ALLOWED_TARGETS). Pure: no lookups here.
 *
 * The special-purpose ranges are IANA's IPv4 and IPv6 registries, with the ranges that wrap an
 * IPv4 address in an IPv6 one (NAT64, 6to4, Teredo) counted as special too: through a translator
 * they reach an IPv4 address this check never saw. IPv6 outside 2000::/3 is not unicast space in
 * use on the Internet, so it is never public either.
 */
import { type Cidr, cidr, type IpAddress, inRange, parseCidrList, parseIp } from './ip-ranges.js';

export type AddressKind =
  | 'unspecified'
  | 'loopback'
  | 'private'
  | 'shared'
  | 'link-local'
  | 'multicast'
  | 'documentation'
  | 'reserved';

export type AddressVerdict = { allowed: true } | { allowed: false; kind: AddressKind | 'invalid' };

/** First match names the kind: the narrow ranges come before the wide ones that hold them. */
const SPECIAL: ReadonlyArray<readonly [Cidr, AddressKind]> = (
  [
    ['0.0.0.0/8', 'unspecified'],
    ['10.0.0.0/8', 'private'],
    ['100.64.0.0/10', 'shared'],
    ['127.0.0.0/8', 'loopback'],
    ['169.254.0.0/16', 'link-local'], // 169.254.169.254: the clouds' metadata service
    ['172.16.0.0/12', 'private'],
    ['192.0.0.0/24', 'reserved'],
    ['192.0.2.0/24', 'documentation'],
    ['192.88.99.0/24', 'reserved'],
    ['192.168.0.0/16', 'private'],
    ['198.18.0.0/15', 'reserved'],
    ['198.51.100.0/24', 'documentation'],
    ['203.0.113.0/24', 'documentation'],
    ['224.0.0.0/4', 'multicast'],
    ['240.0.0.0/4', 'reserved'], // with 255.255.255.255
    ['::/128', 'unspecified'],
    ['::1/128', 'loopback'],
    ['::/8', 'reserved'],
    ['64:ff9b::/96', 'reserved'],
    ['64:ff9b:1::/48', 'reserved'],
    ['100::/64', 'reserved'],
    ['2001:db8::/32', 'documentation'],
    ['2001::/23', 'reserved'],
    ['2002::/16', 'reserved'],
    ['3fff::/20', 'documentation'],
    ['fc00::/7', 'private'],
    ['fe80::/10', 'link-local'],
    ['fec0::/10', 'reserved'],
    ['ff00::/8', 'multicast'],
  ] as const
).map(([range, kind]) => [cidr(range), kind] as const);

const GLOBAL_UNICAST_V6 = cidr('2000::/3');

/** SITEPLANE_ALLOWED_TARGETS when unset: RFC 1918 and unique-local addresses. */
export const DEFAULT_ALLOWED_TARGETS = '10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7';

/** The ranges of SITEPLANE_ALLOWED_TARGETS (comma-separated; `none` for public addresses only). */
export function parseAllowedTargets(raw: string): { ranges: Cidr[]; problems: string[] } {
  if (raw.trim().toLowerCase() === 'none') return { ranges: [], problems: [] };
  return parseCidrList('SITEPLANE_ALLOWED_TARGETS', raw);
}

/** The kind of a special-purpose address; null for a public one. */
export function specialKind(address: IpAddress): AddressKind | null {
  for (const [range, kind] of SPECIAL) if (inRange(address, range)) return kind;
  if (address.family === 6 && !inRange(address, GLOBAL_UNICAST_V6)) return 'reserved';
  return null;
}

/** The one address check: public, or inside a range the operator allowed. */
export function checkAddress(text: string, allowed: readonly Cidr[]): AddressVerdict {
  const address = parseIp(text);
  if (!address) return { allowed: false, kind: 'invalid' };
  if (allowed.some((range) => inRange(address, range))) return { allowed: true };
  const kind = specialKind(address);
  return kind === null ? { allowed: true } : { allowed: false, kind };
}
