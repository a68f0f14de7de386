import { isIP } from 'node:net';

/**
 * Temporary domains (spec §4.1 rule 3, issue 2 item 8): a 16-character [a-z0-9] label followed by
 * 4 digits. Under an IP-embedding wildcard DNS service (sslip.io, nip.io) the server's address is
 * put between label and base, so the name resolves with no DNS record of ours. In the owned-zone
 * mode (FREE_DOMAIN_ZONE) the base is the zone, and an A record per site is created through the
 * zone's DNS profile (use-cases/ssl/free-domain-records.ts).
 */
const IP_EMBEDDING_BASES = new Set(['sslip.io', 'nip.io']);
const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

export function freeDomainLabel(randomInt: (max: number) => number): string {
  let label = '';
  for (let i = 0; i < 16; i++) label += ALPHABET[randomInt(ALPHABET.length)];
  for (let i = 0; i < 4; i++) label += String(randomInt(10));
  return label;
}

export function freeDomainName(label: string, base: string, serverIp: string): string {
  if (IP_EMBEDDING_BASES.has(base) && isIP(serverIp) === 4) return `${label}.${serverIp.replace(/\./g, '-')}.${base}`;
  return `${label}.${base}`;
}
