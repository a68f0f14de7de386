import { createDnsProvider } from '../dns/create-dns-provider.js';
import type { DnsCredentials, DnsProvider, DnsProviderName } from '../dns/provider.js';
import type { Config } from './config.js';

/** DNS provider adapters pointed at the configured API bases (the providers' own by default; stand-ins in tests). */
export function dnsProviderFactory(config: Config) {
  const apiBase: Record<DnsProviderName, string | null> = {
    cloudflare: config.cloudflareApiBase,
    digitalocean: config.digitaloceanApiBase,
    porkbun: config.porkbunApiBase,
    aws: config.awsRoute53Endpoint,
  };
  return (provider: DnsProviderName, credentials: Record<string, string>): DnsProvider =>
    createDnsProvider(
      provider,
      credentials as unknown as DnsCredentials[typeof provider],
      apiBase[provider] ? { apiBase: apiBase[provider] as string } : {},
    );
}
