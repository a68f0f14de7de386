/**
 * A DNS resolver for the checks around challenges: the configured DNS_RESOLVERS (`ip:port`, or
 * `[ipv6]:port`) when there are any, else the system's. It asks DNS servers directly, never
 * /etc/hosts, because the question is what the CA will see, not what this machine believes.
 */
import { Resolver } from 'node:dns/promises';

export interface ResolverOptions {
  /** `ip:port` entries; empty or absent means the system's resolvers. */
  resolvers?: readonly string[];
  /** Per query attempt. */
  timeoutMs?: number;
}

export function makeResolver(options: ResolverOptions = {}): Resolver {
  const resolver = new Resolver({ timeout: options.timeoutMs ?? 5_000, tries: 2 });
  if (options.resolvers && options.resolvers.length > 0) resolver.setServers([...options.resolvers]);
  return resolver;
}

/** Codes that mean "this name has no such record", as opposed to "the lookup failed". */
export function isNoRecord(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENODATA' || code === 'ENOTFOUND';
}
