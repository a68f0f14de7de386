/**
 * The egress policy every connection to a tenant-chosen target goes through: SSH and verify of a
 * server, the hosted VC providers' HTTPS (a profile's baseUrl), `git ls-remote`, the value of an
 * owned-zone A record. One address check (address-policy.ts) over the ranges parsed once from
 * SITEPLANE_ALLOWED_TARGETS, and one resolving check: a name is resolved and EVERY address it
 * resolves to must pass, so a name with one public and one link-local address is refused.
 *
 * A check before connecting is not enough: a name may resolve to an allowed address when checked
 * and to 169.254.169.254 a second later, when the connection resolves it again (DNS rebinding).
 * So callers connect to what the check returned (`connectAddress` for ssh2), or resolve through
 * `lookup`, which checks at connect time (node:http/https/net), never through a second resolver.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP, type LookupFunction } from 'node:net';
import { type AddressKind, checkAddress } from './address-policy.js';
import { EgressError } from './egress-error.js';
import type { Cidr } from './ip-ranges.js';

/** Every address a host name stands for (the seam tests replace: no real DNS in tests). */
export type ResolveHost = (host: string) => Promise<string[]>;

export const systemResolve: ResolveHost = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((entry) => entry.address);

const RESOLVE_TIMEOUT_MS = 10_000;

const DESCRIBED: Record<AddressKind | 'invalid', string> = {
  unspecified: 'an unspecified',
  loopback: 'a loopback',
  private: 'a private',
  shared: 'a shared (carrier-grade NAT)',
  'link-local': 'a link-local',
  multicast: 'a multicast',
  documentation: 'a documentation',
  reserved: 'a reserved',
  invalid: 'an invalid',
};

export class EgressPolicy {
  constructor(
    readonly allowed: readonly Cidr[],
    private readonly resolveHost: ResolveHost = systemResolve,
  ) {}

  /** Throws EgressError target_not_allowed unless `address` (an IP) may be connected to. */
  assertAddress(address: string, named = address): void {
    const verdict = checkAddress(address, this.allowed);
    if (verdict.allowed) return;
    // A name's addresses are not repeated back: they would tell what the operator's DNS knows.
    const which = named === address ? `${address} is` : `${named} resolves to`;
    throw new EgressError(
      'target_not_allowed',
      `${which} ${DESCRIBED[verdict.kind]} address, which this Siteplane does not connect to (SITEPLANE_ALLOWED_TARGETS)`,
    );
  }

  /** Every address of `host` (an IP or a name), each checked; throws EgressError. */
  async resolve(host: string): Promise<string[]> {
    const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    if (isIP(bare)) {
      this.assertAddress(bare);
      return [bare];
    }
    let addresses: string[];
    let timer: NodeJS.Timeout | undefined;
    try {
      addresses = await Promise.race([
        this.resolveHost(bare),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new EgressError('timeout', `${bare} could not be resolved in time`)),
            RESOLVE_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (error) {
      if (error instanceof EgressError) throw error;
      throw new EgressError('unreachable', `${bare} could not be resolved`);
    } finally {
      clearTimeout(timer);
    }
    if (addresses.length === 0) throw new EgressError('unreachable', `${bare} could not be resolved`);
    for (const address of addresses) this.assertAddress(address, bare);
    return addresses;
  }

  /** One checked address to hand to a client that connects by itself (ssh2). */
  async connectAddress(host: string): Promise<string> {
    return (await this.resolve(host))[0] as string;
  }

  /**
   * A `lookup` for node:net / http / https / tls: the connection's own resolution is the checked
   * one, so a rebinding between a check and the connect cannot slip through.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    this.resolve(hostname).then(
      (all) => {
        const family = typeof options.family === 'number' ? options.family : 0;
        const usable = all.filter((address) => family === 0 || isIP(address) === family);
        if (usable.length === 0) {
          callback(new EgressError('unreachable', `${hostname} has no IPv${family} address`), '', 0);
        } else if (options.all) {
          (callback as unknown as (err: null, all: { address: string; family: number }[]) => void)(
            null,
            usable.map((address) => ({ address, family: isIP(address) })),
          );
        } else {
          callback(null, usable[0] as string, isIP(usable[0] as string));
        }
      },
      (error: Error) => callback(error as NodeJS.ErrnoException, '', 0),
    );
  };
}
