/**
 * IP addresses and CIDR ranges as numbers, so a range check is two comparisons. IPv4-mapped IPv6
 * addresses (`::ffff:10.0.0.1`) are read as the IPv4 address they carry: a socket given one
 * reaches that IPv4 address, so it must be judged as one.
 */
import { isIP } from 'node:net';

export interface IpAddress {
  family: 4 | 6;
  value: bigint;
}

export interface Cidr {
  family: 4 | 6;
  /** The network address (host bits zero). */
  base: bigint;
  prefix: number;
  /** As the operator wrote it, canonical: `10.0.0.0/8`. */
  text: string;
}

const BITS = { 4: 32, 6: 128 } as const;

/** The address, or null when `text` is not an IPv4 or IPv6 address (a zone index `%eth0` is dropped). */
export function parseIp(text: string): IpAddress | null {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  const address = bare.split('%')[0] ?? '';
  const family = isIP(address);
  if (family === 4) return { family: 4, value: ipv4Value(address) };
  if (family !== 6) return null;
  const value = ipv6Value(address);
  // ::ffff:0:0/96 carries an IPv4 address.
  if (value >> 32n === 0xffffn) return { family: 4, value: value & 0xffffffffn };
  return { family: 6, value };
}

/** `10.0.0.0/8`, `fc00::/7`, or a single address (`/32`, `/128`); an error message when invalid. */
export function parseCidr(text: string): Cidr | string {
  const [addressText = '', prefixText, extra] = text.trim().split('/');
  if (extra !== undefined) return `"${text}" is not an address or CIDR range`;
  const family = isIP(addressText);
  if (family !== 4 && family !== 6) return `"${text}" is not an address or CIDR range`;
  const bits = BITS[family];
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (prefixText !== undefined && !/^\d{1,3}$/.test(prefixText)) return `"${text}" has an invalid prefix length`;
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > bits) return `"${text}" has a prefix length beyond ${bits}`;
  const value = family === 4 ? ipv4Value(addressText) : ipv6Value(addressText);
  const base = value & mask(family, prefix);
  if (base !== value) return `"${text}" has host bits set (the range is ${format(family, base)}/${prefix})`;
  return { family, base, prefix, text: `${format(family, base)}/${prefix}` };
}

/** A setting's comma-separated addresses and ranges (empty entries skipped); a problem per bad entry, naming the setting. */
export function parseCidrList(setting: string, raw: string): { ranges: Cidr[]; problems: string[] } {
  const ranges: Cidr[] = [];
  const problems: string[] = [];
  for (const entry of raw.split(',').map((s) => s.trim())) {
    if (entry === '') continue;
    const parsed = parseCidr(entry);
    if (typeof parsed === 'string') problems.push(`${setting} entry ${parsed}`);
    else ranges.push(parsed);
  }
  return { ranges, problems };
}

/** A range written in this file; throws on a typo, at module load. */
export function cidr(text: string): Cidr {
  const parsed = parseCidr(text);
  if (typeof parsed === 'string') throw new Error(parsed);
  return parsed;
}

export function inRange(address: IpAddress, range: Cidr): boolean {
  return address.family === range.family && (address.value & mask(range.family, range.prefix)) === range.base;
}

function mask(family: 4 | 6, prefix: number): bigint {
  const bits = BigInt(BITS[family]);
  const all = (1n << bits) - 1n;
  return (all << (bits - BigInt(prefix))) & all;
}

function ipv4Value(text: string): bigint {
  return text.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n);
}

/** Only called on strings isIP accepted: `::` at most once, perhaps a dotted IPv4 tail. */
function ipv6Value(text: string): bigint {
  const tail = /\d+\.\d+\.\d+\.\d+$/.exec(text)?.[0];
  let hex = text;
  if (tail) {
    const v4 = ipv4Value(tail);
    hex = `${text.slice(0, -tail.length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [left = '', right] = hex.split('::');
  const l = left ? left.split(':') : [];
  const r = right ? right.split(':') : [];
  const groups = right === undefined ? l : [...l, ...Array<string>(8 - l.length - r.length).fill('0'), ...r];
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(Number.parseInt(group, 16)), 0n);
}

function format(family: 4 | 6, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => ((value >> shift) & 0xffn).toString()).join('.');
  const groups = [];
  for (let shift = 112n; shift >= 0n; shift -= 16n) groups.push(((value >> shift) & 0xffffn).toString(16));
  // The longest run of zero groups becomes `::`.
  let best = { start: -1, length: 0 };
  for (let i = 0; i < 8; ) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > best.length && j - i > 1) best = { start: i, length: j - i };
    i = j;
  }
  if (best.start < 0) return groups.join(':');
  return `${groups.slice(0, best.start).join(':')}::${groups.slice(best.start + best.length).join(':')}`;
}
