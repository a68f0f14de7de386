/**
 * Picks the adapter for a DNS profile. `app/` passes the profile's decrypted credentials and, from
 * configuration, the provider's API base (CLOUDFLARE_API_BASE, DIGITALOCEAN_API_BASE,
 * PORKBUN_API_BASE, AWS_ROUTE53_ENDPOINT) when one is set.
 */
import { Route53Dns, type Route53Options } from './aws.js';
import { CloudflareDns } from './cloudflare.js';
import { DigitalOceanDns } from './digitalocean.js';
import type { HttpAdapterOptions } from './http.js';
import { PorkbunDns } from './porkbun.js';
import { type DnsCredentials, DnsError, type DnsProvider, type DnsProviderName } from './provider.js';

/** `apiBase` and `timeoutMs` apply to all; `fetch` and `rateLimitRetries` to the HTTP providers; `waitForSync` to aws. */
export interface DnsProviderOptions extends HttpAdapterOptions, Route53Options {}

/** Credential fields each provider needs, checked before any request so a half-filled profile fails clearly. */
const REQUIRED: { [N in DnsProviderName]: (keyof DnsCredentials[N])[] } = {
  cloudflare: ['apiToken'],
  digitalocean: ['token'],
  porkbun: ['apiKey', 'secretApiKey'],
  aws: ['accessKeyId', 'secretAccessKey'],
};

export function createDnsProvider<N extends DnsProviderName>(
  provider: N,
  credentials: DnsCredentials[N],
  options: DnsProviderOptions = {},
): DnsProvider {
  const required = REQUIRED[provider] as string[] | undefined;
  if (!required) throw new DnsError('provider_error', `unknown DNS provider ${JSON.stringify(String(provider))}`);
  const given = credentials as unknown as Record<string, unknown>;
  const missing = required.filter((field) => typeof given?.[field] !== 'string' || given[field] === '');
  // Names the fields, never their values.
  if (missing.length > 0) throw new DnsError('auth_failed', `${provider}: credentials lack ${missing.join(', ')}`);

  switch (provider) {
    case 'cloudflare':
      return new CloudflareDns(credentials as DnsCredentials['cloudflare'], options);
    case 'digitalocean':
      return new DigitalOceanDns(credentials as DnsCredentials['digitalocean'], options);
    case 'porkbun':
      return new PorkbunDns(credentials as DnsCredentials['porkbun'], options);
    default:
      return new Route53Dns(credentials as DnsCredentials['aws'], options);
  }
}
