/**
 * Waits until a DNS-01 TXT value can be seen through the configured resolvers before the CA is
 * asked to look: providers accept a record seconds to minutes before their nameservers serve it,
 * and a CA that looks too early fails the authorization for good.
 */
import type { Resolver } from 'node:dns/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { TlsError } from './errors.js';
import { isNoRecord, makeResolver } from './resolver.js';

export interface TxtVisibilityOptions {
  /** `ip:port` entries (DNS_RESOLVERS); every one must see the value. Absent: the system's. */
  resolvers?: readonly string[];
  /** How long to wait in total; 2 minutes covers the common providers. */
  visibleWithinMs?: number;
  intervalMs?: number;
}

/** What one resolver says about the value: seen, or why not. */
async function check(resolver: Resolver, fqdn: string, value: string): Promise<true | string> {
  try {
    // A long value arrives as several strings of one record; the record is their concatenation.
    const records = await resolver.resolveTxt(fqdn);
    if (records.some((chunks) => chunks.join('') === value)) return true;
    return records.length === 0 ? 'no TXT record' : 'other TXT values only';
  } catch (error) {
    return isNoRecord(error) ? 'no TXT record' : ((error as NodeJS.ErrnoException).code ?? 'lookup failed');
  }
}

export async function waitForTxt(fqdn: string, value: string, options: TxtVisibilityOptions = {}): Promise<void> {
  const visibleWithinMs = options.visibleWithinMs ?? 120_000;
  const interval = options.intervalMs ?? 2_000;
  const deadline = Date.now() + visibleWithinMs;
  // One resolver per server: a Resolver given several servers asks the next only when one fails,
  // and a server that answers without the value must count as "not yet".
  const servers = options.resolvers?.length ? options.resolvers : [undefined];
  const resolvers = servers.map((server) => ({
    label: server ?? 'the system resolver',
    resolver: makeResolver({ ...(server ? { resolvers: [server] } : {}), timeoutMs: Math.min(interval, 2_000) }),
  }));
  let missing: string[] = [];
  for (;;) {
    const answers = await Promise.all(resolvers.map(({ resolver }) => check(resolver, fqdn, value)));
    missing = resolvers.flatMap(({ label }, i) => (answers[i] === true ? [] : [`${label}: ${answers[i]}`]));
    if (missing.length === 0) return;
    if (Date.now() + interval > deadline) break;
    await sleep(interval);
  }
  const seconds = Math.round(visibleWithinMs / 1000);
  throw new TlsError(
    'dns_provider_failed',
    `The TXT record ${fqdn} did not become visible within ${seconds} s (${missing.join('; ')}); check the DNS profile manages this zone.`,
    { domain: fqdn.replace(/^_acme-challenge\./, '') },
  );
}
