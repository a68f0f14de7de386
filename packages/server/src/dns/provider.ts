/**
 * DNS providers behind one interface (issue 4): used for DNS-01 challenges of wildcard certificates
 * and for A records of temporary domains in an owned zone. One file per provider in this folder;
 * `create-dns-provider.ts` picks one for a DNS profile.
 */
export type DnsProviderName = 'cloudflare' | 'digitalocean' | 'porkbun' | 'aws';

export interface DnsCredentials {
  cloudflare: { apiToken: string };
  digitalocean: { token: string };
  porkbun: { apiKey: string; secretApiKey: string };
  aws: { accessKeyId: string; secretAccessKey: string; region?: string };
}

export type DnsRecordType = 'TXT' | 'A';

/** What createRecord made, enough to remove exactly that record later (stored in a site's ledger). */
export interface DnsRecordRef {
  /** Provider's own id of the record. Route 53 has none; there it is `<name>|<type>|<value>`. */
  id: string;
  /** Zone name (`example.com`). */
  zone: string;
  /** Provider's id of the zone: Cloudflare zone id, Route 53 hosted zone id, else the zone name. */
  zoneId: string;
  /** Fully qualified, lower case, no trailing dot. */
  name: string;
  type: DnsRecordType;
  value: string;
}

export interface DnsProvider {
  /** Checks the credentials against the provider; throws DnsError('auth_failed') when rejected. */
  verify(): Promise<void>;
  /** The longest zone the account hosts that contains a fully qualified name; DnsError('zone_not_found') if none. */
  findZone(fqdn: string): Promise<string>;
  /**
   * Ensures a record exists; `name` is fully qualified (`_acme-challenge.example.com`). Records with the
   * same name and type but other values are kept (a wildcard and its apex need two TXT values at once).
   * When the same name, type and value already exist, that record is returned instead of a duplicate,
   * so a retried step leaves one record.
   */
  createRecord(record: { name: string; type: DnsRecordType; value: string; ttl?: number }): Promise<DnsRecordRef>;
  /** Removes a record created by createRecord; removing one already gone is not an error. */
  deleteRecord(ref: DnsRecordRef): Promise<void>;
}

export type DnsErrorKind =
  | 'auth_failed'
  | 'rate_limited'
  | 'unreachable'
  | 'zone_not_found'
  | 'provider_error'
  /** waitForTxt: the record did not become visible in time. */
  | 'propagation_timeout';

/** A provider failure. Messages carry the provider's words, never credentials. */
export class DnsError extends Error {
  constructor(
    readonly kind: DnsErrorKind,
    message: string,
    /** Seconds to wait before trying again, for rate_limited. */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'DnsError';
  }
}
