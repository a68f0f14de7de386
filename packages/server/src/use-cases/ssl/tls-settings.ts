import { readFileSync } from 'node:fs';
import type { Kysely } from 'kysely';
import type { Clock } from '../../app/clock.js';
import type { Config } from '../../app/config.js';
import type { SecretBox } from '../../crypto/secret-box.js';
import type { DnsProvider, DnsProviderName } from '../../dns/provider.js';
import type { EgressPolicy } from '../../egress/egress-policy.js';
import type { Dialect } from '../../storage/database.js';
import type { Database } from '../../storage/schema.js';
import type { ExternalAccountBinding } from '../../tls/account.js';
import type { CertificateAuthority, FreeDomainZone } from '../../tls/certificate-plan.js';
import type { IssuanceBudget } from '../../tls/issuance-limits.js';

/** What certificate work needs from configuration (README "TLS"). */
export interface TlsSettings {
  directories: Record<CertificateAuthority, string>;
  /** ZEROSSL_EAB_KID / ZEROSSL_EAB_HMAC_KEY; ZeroSSL refuses accounts without them. */
  zerosslEab: ExternalAccountBinding | null;
  /** ACME_CA_CERTS, read: trusted for the CA's own HTTPS in addition to the system roots. */
  caCertsPem: string | null;
  /** DNS_RESOLVERS: where "does the domain point here?" and "is the TXT record visible?" are asked. */
  resolvers: string[];
  /** FREE_DOMAIN_ZONE + FREE_DOMAIN_DNS_PROFILE: the owned-zone mode of temporary domains. */
  freeZone: FreeDomainZone | null;
  /** FREE_DOMAIN_CERTIFICATES_PER_WEEK, FREE_DOMAIN_TEAM_CERTIFICATES_PER_WEEK (tls/issuance-limits.ts). */
  freeZoneBudget: IssuanceBudget;
  /** First wait between polls of the CA (default 2 s; tests use less). */
  pollIntervalMs?: number;
  /** How often and how long to look for a DNS-01 TXT record (defaults 2 s and 2 min). */
  txtIntervalMs?: number;
  txtVisibleWithinMs?: number;
}

/** What the certificate use cases receive (a subset of the use-case and job dependencies). */
export interface SslDeps {
  db: Kysely<Database>;
  /** The zone's issuance records are checked under a PostgreSQL advisory lock. */
  dialect: Dialect;
  secrets: SecretBox;
  clock: Clock;
  settings: TlsSettings;
  dnsProvider(provider: DnsProviderName, credentials: Record<string, string>): DnsProvider;
  /** Owned-zone A records point only at addresses a tenant may target (SITEPLANE_ALLOWED_TARGETS). */
  egress: EgressPolicy;
  /** Told how each order placed with the CA ended: `issued`, or the TlsError kind (`ca_unreachable` …). */
  orderOutcome?(outcome: string): void;
}

/** ACME_CA_CERTS names a PEM file; a value that is itself PEM is taken as is. */
export function readCaCerts(value: string | null): string | null {
  if (!value) return null;
  if (value.includes('-----BEGIN')) return value;
  return readFileSync(value, 'utf8');
}

export function tlsSettingsFrom(config: Config): TlsSettings {
  return {
    directories: { letsencrypt: config.acmeDirectoryLetsEncrypt, zerossl: config.acmeDirectoryZeroSsl },
    zerosslEab:
      config.zerosslEabKid && config.zerosslEabHmacKey ? { kid: config.zerosslEabKid, hmacKey: config.zerosslEabHmacKey } : null,
    caCertsPem: readCaCerts(config.acmeCaCerts),
    resolvers: config.dnsResolvers,
    freeZone:
      config.freeDomainZone && config.freeDomainDnsProfile
        ? { zone: config.freeDomainZone, dnsProfile: config.freeDomainDnsProfile }
        : null,
    freeZoneBudget: config.freeZoneBudget,
  };
}
