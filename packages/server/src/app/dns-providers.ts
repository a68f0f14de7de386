import { DomainError } from '../domain/errors.js';
import type { DnsProvider, DnsProviderName } from '../dns/provider.js';
import type { Config } from './config.js';

/** DNS provider adapters with the API bases of the configuration (stand-ins in tests). */
export function dnsProviderFactory(_config: Config) {
  return (provider: DnsProviderName, _credentials: Record<string, string>): DnsProvider => {
    throw new DomainError('not_implemented', `The ${provider} DNS adapter is not wired yet.`);
  };
}
