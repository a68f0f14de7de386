/**
 * Cloudflare API v4 (https://developers.cloudflare.com/api/): Bearer API token, every answer in a
 * `{success, errors, result, result_info}` envelope, lists paged with `page`/`per_page`.
 */
import { type HttpAdapterOptions, type HttpReply, ProviderHttp } from './http.js';
import { candidateZones, normalizeName, ttlAtLeast } from './names.js';
import type { DnsCredentials, DnsProvider, DnsRecordRef, DnsRecordType } from './provider.js';

export const CLOUDFLARE_API_BASE = 'https://api.cloudflare.com/client/v4';

interface Envelope<T> {
  success?: boolean;
  errors?: { code: number; message: string }[];
  result: T;
  result_info?: { page: number; total_pages?: number };
}

interface CfZone {
  id: string;
  name: string;
}

interface CfRecord {
  id: string;
  name: string;
  type: string;
  content: string;
}

/**
 * Error codes that mean the token is wrong or lacks a permission, whatever the status: 1000 invalid
 * token (verify), 6003/6103/6111 malformed auth headers, 9106/9109 bad or unauthorized token, 10000
 * "Authentication error" (also a token without Zone:Read or DNS:Edit).
 */
const AUTH_CODES = new Set([1000, 6003, 6103, 6111, 9106, 9109, 10000]);
/** Cloudflare's smallest TTL (1 means "automatic"). */
const MIN_TTL = 60;
/** Largest page Cloudflare accepts for DNS record lists. */
const RECORDS_PER_PAGE = 100;

export class CloudflareDns implements DnsProvider {
  private readonly http: ProviderHttp;

  constructor(credentials: DnsCredentials['cloudflare'], options: HttpAdapterOptions = {}) {
    this.http = new ProviderHttp({
      provider: 'cloudflare',
      defaultBase: CLOUDFLARE_API_BASE,
      adapter: options,
      headers: { authorization: `Bearer ${credentials.apiToken}` },
      secrets: [credentials.apiToken],
    });
  }

  async verify(): Promise<void> {
    const { result } = await this.call<{ status: string }>('GET', '/user/tokens/verify');
    if (result.status !== 'active') throw this.http.error('auth_failed', `the API token is ${result.status}`);
  }

  async findZone(fqdn: string): Promise<string> {
    return (await this.zoneFor(fqdn)).name;
  }

  async createRecord(record: { name: string; type: DnsRecordType; value: string; ttl?: number }): Promise<DnsRecordRef> {
    const name = normalizeName(record.name);
    const zone = await this.zoneFor(name);
    const ref = (id: string): DnsRecordRef => ({
      id,
      zone: zone.name,
      zoneId: zone.id,
      name,
      type: record.type,
      value: record.value,
    });

    const existing = await this.findRecord(zone.id, name, record.type, record.value);
    if (existing) return ref(existing.id);

    const { result } = await this.call<CfRecord>('POST', `/zones/${zone.id}/dns_records`, {
      type: record.type,
      name,
      content: record.value,
      ttl: ttlAtLeast(record.ttl, MIN_TTL),
      // An A record for a temporary domain must answer with the server's address, not Cloudflare's proxy.
      ...(record.type === 'A' ? { proxied: false } : {}),
    });
    return ref(result.id);
  }

  async deleteRecord(ref: DnsRecordRef): Promise<void> {
    const reply = await this.http.request('DELETE', `/zones/${ref.zoneId}/dns_records/${encodeURIComponent(ref.id)}`);
    // 404 (code 81044 "Record does not exist") means someone, or an earlier attempt, removed it already.
    if (reply.status === 404) return;
    this.unwrap<unknown>(reply);
  }

  /** Asks for each candidate zone by exact name, longest first, so the first hit is the longest suffix. */
  private async zoneFor(fqdn: string): Promise<{ id: string; name: string }> {
    for (const candidate of candidateZones(fqdn)) {
      const { result } = await this.call<CfZone[]>('GET', `/zones?name=${encodeURIComponent(candidate)}&per_page=5`);
      const zone = result.find((z) => normalizeName(z.name) === candidate);
      if (zone) return { id: zone.id, name: candidate };
    }
    throw this.http.error('zone_not_found', `no zone of this account contains ${normalizeName(fqdn)}`);
  }

  private async findRecord(zoneId: string, name: string, type: DnsRecordType, value: string): Promise<CfRecord | undefined> {
    const query = `type=${type}&name=${encodeURIComponent(name)}&per_page=${RECORDS_PER_PAGE}`;
    for (let page = 1; ; page++) {
      const { result, result_info } = await this.call<CfRecord[]>('GET', `/zones/${zoneId}/dns_records?${query}&page=${page}`);
      const match = result.find((r) => r.type === type && normalizeName(r.name) === name && sameContent(r, value));
      if (match) return match;
      if (result.length === 0 || page >= (result_info?.total_pages ?? page)) return undefined;
    }
  }

  private async call<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<Envelope<T>> {
    return this.unwrap<T>(await this.http.request(method, path, body));
  }

  private unwrap<T>(reply: HttpReply): Envelope<T> {
    const envelope = reply.json as Envelope<T> | undefined;
    if (reply.status < 300 && envelope?.success === true) return envelope;
    const errors = Array.isArray(envelope?.errors) ? envelope.errors : [];
    const message = errors.map((e) => `${e.message} (${e.code})`).join('; ') || undefined;
    if (!this.http.isRateLimited(reply) && errors.some((e) => AUTH_CODES.has(e.code))) {
      throw this.http.error('auth_failed', `${message} (HTTP ${reply.status})`);
    }
    throw this.http.failure(reply, message);
  }
}

/** Cloudflare may keep TXT content quoted (the dashboard adds quotes); the value is the same. */
function sameContent(record: CfRecord, value: string): boolean {
  if (record.content === value) return true;
  return record.type === 'TXT' && record.content === `"${value}"`;
}
