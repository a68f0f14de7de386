/**
 * Before HTTP-01: does the domain point to this server? A domain whose A/AAAA records are missing
 * or name another host is the most common reason issuance fails, and the CA's own message for it
 * ("connection refused", "unauthorized") does not say so. Checking first also spares the CA's
 * failed-validation limit (Let's Encrypt: 5 per account, name and hour).
 *
 * Every address must be the server's: the CA picks any A record, and prefers IPv6 when there is
 * an AAAA record, so a stale AAAA left at the old host fails validation too.
 */
import { isIP } from 'node:net';
import { TlsError } from './errors.js';
import { isNoRecord, makeResolver, type ResolverOptions } from './resolver.js';

/** One spelling per address, so `::1` and `0:0::1` compare equal. */
function canonicalIp(ip: string): string {
  return isIP(ip) === 6 ? new URL(`http://[${ip}]/`).hostname.slice(1, -1) : ip;
}

async function lookup(query: () => Promise<string[]>, domain: string, servers: string): Promise<string[]> {
  try {
    return await query();
  } catch (error) {
    if (isNoRecord(error)) return [];
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new TlsError(
      'dns_not_pointing',
      `Could not look up ${domain} (${code} from ${servers}); check its DNS records and try again.`,
      {
        domain,
      },
    );
  }
}

/** The domain's A and AAAA addresses as the configured resolvers see them. */
export async function resolveAddresses(domain: string, options: ResolverOptions = {}): Promise<string[]> {
  const resolver = makeResolver(options);
  const servers = resolver.getServers().join(', ');
  const [v4, v6] = await Promise.all([
    lookup(() => resolver.resolve4(domain), domain, servers),
    lookup(() => resolver.resolve6(domain), domain, servers),
  ]);
  return [...v4, ...v6].map(canonicalIp);
}

/** Throws TlsError('dns_not_pointing') unless every address of `domain` is one of `serverIps`. */
export async function assertResolvesTo(
  domain: string,
  serverIps: readonly string[],
  options: ResolverOptions = {},
): Promise<void> {
  const expected = new Set(serverIps.map(canonicalIp));
  const shown = [...expected].join(' or ');
  const found = await resolveAddresses(domain, options);
  if (found.length === 0) {
    throw new TlsError(
      'dns_not_pointing',
      `${domain} has no A or AAAA record. Point it to this server (${shown}) at your DNS provider, wait for the change to spread, then try again.`,
      { domain },
    );
  }
  const foreign = found.filter((ip) => !expected.has(ip));
  if (foreign.length > 0) {
    throw new TlsError(
      'dns_not_pointing',
      `${domain} does not point to this server: it resolves to ${found.join(', ')}, expected ${shown}. ` +
        `Change its A/AAAA records to ${shown} (remove ${foreign.join(', ')}), wait for DNS to update, then try again.`,
      { domain },
    );
  }
}
