/**
 * What the cases of the TLS site suite share, set up once by tls-sites.test.ts: the service on
 * this machine, its local server, the DNS provider stand-ins (mirrored into the mock DNS) with a
 * DNS profile each, Pebble's roots, and the HTTP-01 forwarder. One suite file, so nginx, port 5002
 * and the clock have one owner; the cases live in their own modules.
 */
import type { DnsProviderName } from '../../../../src/dns/provider.js';
import type { DnsStandin } from '../../../standins/dns/standin-server.js';
import type { DnsMirror } from './dns-mirror.js';
import type { Ids } from './sites.js';
import type { TlsSuite } from './suite.js';

export interface Context {
  suite: TlsSuite;
  ids: Ids;
  /** A label unique to this run, so names never meet state of an earlier run (Pebble, mock DNS). */
  run: string;
  standins: Record<DnsProviderName, DnsStandin<Record<string, string>>>;
  /** The zone each stand-in hosts. */
  zones: Record<DnsProviderName, string>;
  /** A working DNS profile (uuid) per provider. */
  profiles: Record<DnsProviderName, string>;
  /** One mirror per stand-in: each publishes what its stand-in holds. */
  mirrors: Record<DnsProviderName, DnsMirror>;
  /** The roots Pebble (Let's Encrypt stand-in) and Pebble with EAB (ZeroSSL stand-in) issue under. */
  roots: { letsencrypt: string; zerossl: string };
}

/** Filled by the suite's beforeAll; cases read it inside their tests. */
export const ctx = {} as Context;
