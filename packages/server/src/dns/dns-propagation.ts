/**
 * Waits until a TXT value can be resolved before a DNS-01 challenge is answered: a CA that looks too
 * early caches the miss and fails the order. Resolvers come from DNS_RESOLVERS (`ip:port`, so a
 * test can point at a local DNS server); without any, the system's resolvers are asked.
 */
import { Resolver } from 'node:dns/promises';
import { normalizeName } from './names.js';
import { DnsError } from './provider.js';

export interface WaitForTxtOptions {
  /** `ip` or `ip:port` (`[v6]:port`) each; every one must see the value. Empty or missing: system resolvers. */
  resolvers?: string[];
  /** Default 120 s. */
  timeoutMs?: number;
  /** Pause between rounds of queries. Default 2 s. */
  intervalMs?: number;
}

/**
 * Resolves once every resolver returns `value` among the TXT strings of `fqdn`; throws
 * DnsError('propagation_timeout') naming the resolvers that still do not.
 */
export async function waitForTxt(fqdn: string, value: string, options: WaitForTxtOptions = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? 120_000;
  const intervalMs = options.intervalMs ?? 2_000;
  const name = normalizeName(fqdn);
  const servers = options.resolvers?.length ? options.resolvers : [undefined];
  // One resolver per server: a Resolver with several servers only asks the next when one fails, and a
  // server that answers without the value must count as "not yet", not be skipped.
  const resolvers = servers.map((server) => {
    // A single try per round; the rounds are the retries. The query timeout stays within a round.
    const resolver = new Resolver({ timeout: Math.max(100, Math.min(intervalMs, 2_000)), tries: 1 });
    if (server) resolver.setServers([server]);
    return { label: server ?? 'system resolver', resolver };
  });

  const deadline = Date.now() + timeoutMs;
  let missing = resolvers.map((r) => r.label);
  try {
    for (;;) {
      const seen = await Promise.all(resolvers.map(({ resolver }) => hasTxt(resolver, name, value)));
      missing = resolvers.filter((_, i) => !seen[i]).map((r) => r.label);
      if (missing.length === 0) return;
      const left = deadline - Date.now();
      if (left <= 0) break;
      await new Promise((resolve) => setTimeout(resolve, Math.min(intervalMs, left)));
    }
  } finally {
    for (const { resolver } of resolvers) resolver.cancel();
  }
  throw new DnsError('propagation_timeout', `TXT ${name} not visible at ${missing.join(', ')} after ${timeoutMs} ms`);
}

async function hasTxt(resolver: Resolver, name: string, value: string): Promise<boolean> {
  try {
    // A TXT record is a list of strings of ≤ 255 characters; the value is their concatenation.
    const records = await resolver.resolveTxt(name);
    return records.some((chunks) => chunks.join('') === value);
  } catch {
    // NXDOMAIN, no data, timeouts, refused: not visible yet; the next round asks again.
    return false;
  }
}
