/**
 * The DNS provider behind a stored DNS profile, for DNS-01 and for temporary-domain A records.
 * Provider failures become TlsErrors whose messages say which profile failed and what to do.
 */
import { DnsError, type DnsProvider, type DnsProviderName } from '../../dns/provider.js';
import { TlsError } from '../../tls/errors.js';
import type { SslDeps } from './tls-settings.js';

export interface ProfileProvider {
  uuid: string;
  name: string;
  provider: DnsProviderName;
  dns: DnsProvider;
}

export async function profileProvider(deps: SslDeps, uuid: string): Promise<ProfileProvider> {
  const row = await deps.db.selectFrom('dns_profiles').selectAll().where('uuid', '=', uuid).executeTakeFirst();
  if (!row) {
    throw new TlsError(
      'dns_provider_failed',
      `The DNS profile ${uuid} no longer exists; create the site's DNS profile again or choose another one.`,
    );
  }
  const provider = row.provider as DnsProviderName;
  const credentials = deps.secrets.openJson<Record<string, string>>(row.credentials_enc);
  try {
    return { uuid: row.uuid, name: row.name, provider, dns: deps.dnsProvider(provider, credentials) };
  } catch (error) {
    throw profileFailure({ name: row.name, provider }, error);
  }
}

/** verify() first: wrong credentials are reported as such, before anything is ordered from the CA. */
export async function verifiedProfile(deps: SslDeps, uuid: string, log: (line: string) => void): Promise<ProfileProvider> {
  const profile = await profileProvider(deps, uuid);
  log(`Checking the credentials of DNS profile "${profile.name}" (${profile.provider})`);
  try {
    await profile.dns.verify();
  } catch (error) {
    throw profileFailure(profile, error);
  }
  await deps.db
    .updateTable('dns_profiles')
    .set({ verified_at: deps.clock.now().toISOString() })
    .where('uuid', '=', profile.uuid)
    .execute();
  return profile;
}

export function profileFailure(profile: { name: string; provider: string }, error: unknown): TlsError {
  const about = `DNS profile "${profile.name}" (${profile.provider})`;
  if (!(error instanceof DnsError)) {
    return new TlsError('dns_provider_failed', `The ${about} failed: ${error instanceof Error ? error.message : String(error)}.`);
  }
  switch (error.kind) {
    case 'auth_failed':
      return new TlsError(
        'dns_provider_failed',
        `The provider rejected the credentials of the ${about}: ${error.message}. Update the profile's credentials, then retry (POST /api/v1/sites/<uuid>/ssl).`,
      );
    case 'rate_limited': {
      const wait = error.retryAfterSeconds;
      return new TlsError(
        'rate_limited',
        `The DNS provider of the ${about} is rate-limiting Siteplane (${error.message}); try again${wait !== undefined ? ` in ${wait} s` : ' later'}.`,
        wait !== undefined ? { retryAfterSeconds: wait } : {},
      );
    }
    case 'zone_not_found':
      return new TlsError(
        'dns_provider_failed',
        `The ${about} does not manage this domain's zone: ${error.message}. Use a profile of the account that hosts the zone.`,
      );
    case 'unreachable':
      return new TlsError('dns_provider_failed', `The DNS provider of the ${about} could not be reached: ${error.message}.`);
    default:
      return new TlsError('dns_provider_failed', `The DNS provider of the ${about} answered with an error: ${error.message}.`);
  }
}
