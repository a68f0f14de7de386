/**
 * DNS providers behind one interface (issue 4): used for DNS-01 challenges of wildcard certificates
 * and for A records of temporary domains in an owned zone. One file per provider in this folder.
 */
export type DnsProviderName = 'cloudflare' | 'digitalocean' | 'porkbun' | 'aws';

export interface DnsCredentials {
  cloudflare: { apiToken: string };
  digitalocean: { token: string };
  porkbun: { apiKey: string; secretApiKey: string };
  aws: { accessKeyId: string; secretAccessKey: string; region?: string };
}

export interface DnsRecordRef {
  /** Provider's own id of the record, to remove exactly what was created. */
  id: string;
  zone: string;
  name: string;
  type: 'TXT' | 'A';
  value: string;
}

export interface DnsProvider {
  /** Checks the credentials against the provider; throws DnsError('auth_failed') when rejected. */
  verify(): Promise<void>;
  /** The zone (registered domain) the provider hosts for a fully qualified name. */
  findZone(fqdn: string): Promise<string>;
  /** Creates a record; `name` is fully qualified (`_acme-challenge.example.com`). */
  createRecord(record: { name: string; type: 'TXT' | 'A'; value: string; ttl?: number }): Promise<DnsRecordRef>;
  /** Removes a record created by createRecord; removing one already gone is not an error. */
  deleteRecord(ref: DnsRecordRef): Promise<void>;
}

export type DnsErrorKind = 'auth_failed' | 'rate_limited' | 'unreachable' | 'zone_not_found' | 'provider_error';

export class DnsError extends Error {
  constructor(
    readonly kind: DnsErrorKind,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'DnsError';
  }
}
