/**
 * Porkbun JSON API v3 (https://porkbun.com/api/json/v3/documentation): every call is a POST with
 * `apikey` and `secretapikey` in the body, answers carry `status: "SUCCESS" | "ERROR"` and a `message`.
 * Record names are relative to the domain ('' for the apex). Each domain must be opted in to API access.
 */
import { type HttpAdapterOptions, type HttpReply, ProviderHttp } from './http.js';
import { longestZone, normalizeName, relativeName, ttlAtLeast } from './names.js';
import type { DnsCredentials, DnsProvider, DnsRecordRef, DnsRecordType } from './provider.js';

export const PORKBUN_API_BASE = 'https://api.porkbun.com/api/json/v3';

interface PbRecord {
  id: string | number;
  name: string;
  type: string;
  content: string;
}

/** Porkbun's smallest (and default) TTL. */
const MIN_TTL = 600;
/** domain/listAll answers 1000 domains per call; `start` moves by that much. */
const DOMAINS_PER_PAGE = 1000;
const MAX_PAGES = 100;

export class PorkbunDns implements DnsProvider {
  private readonly http: ProviderHttp;
  private readonly auth: { apikey: string; secretapikey: string };

  constructor(credentials: DnsCredentials['porkbun'], options: HttpAdapterOptions = {}) {
    this.auth = { apikey: credentials.apiKey, secretapikey: credentials.secretApiKey };
    this.http = new ProviderHttp({
      provider: 'porkbun',
      defaultBase: PORKBUN_API_BASE,
      adapter: options,
      headers: {},
      secrets: [credentials.apiKey, credentials.secretApiKey],
      // Porkbun's limiter (about one request a second per key) answers 503 with an HTML page, no Retry-After.
      isRateLimited: (reply) => reply.status === 429 || (reply.status === 503 && reply.json === undefined),
      retryAfterFallback: () => 1,
    });
  }

  async verify(): Promise<void> {
    await this.call('/ping');
  }

  async findZone(fqdn: string): Promise<string> {
    const domains: string[] = [];
    for (let page = 0; page < MAX_PAGES; page++) {
      const body = await this.call('/domain/listAll', { start: String(page * DOMAINS_PER_PAGE) });
      const list = Array.isArray(body.domains) ? (body.domains as { domain: string }[]) : [];
      domains.push(...list.map((d) => d.domain));
      // The documented end is an empty page; a short page is the end too and saves a request.
      if (list.length < DOMAINS_PER_PAGE) break;
    }
    const zone = longestZone(fqdn, domains);
    if (!zone) throw this.http.error('zone_not_found', `no domain of this account contains ${normalizeName(fqdn)}`);
    return zone;
  }

  async createRecord(record: { name: string; type: DnsRecordType; value: string; ttl?: number }): Promise<DnsRecordRef> {
    const name = normalizeName(record.name);
    const zone = await this.findZone(name);
    const sub = relativeName(name, zone);
    const ref = (id: string | number): DnsRecordRef => ({
      id: String(id),
      zone,
      zoneId: zone,
      name,
      type: record.type,
      value: record.value,
    });

    // Porkbun refuses an exact duplicate, so a retried create must find the first one.
    const found = await this.call(`/dns/retrieveByNameType/${path(zone)}/${record.type}${sub ? `/${path(sub)}` : ''}`);
    const same = records(found).find((r) => r.type === record.type && r.content === record.value);
    if (same) return ref(same.id);

    const created = await this.call(`/dns/create/${path(zone)}`, {
      name: sub,
      type: record.type,
      content: record.value,
      ttl: String(ttlAtLeast(record.ttl, MIN_TTL)),
    });
    if (created.id === undefined || created.id === null)
      throw this.http.error('provider_error', 'record created but no id in the answer');
    return ref(created.id as string | number);
  }

  async deleteRecord(ref: DnsRecordRef): Promise<void> {
    const reply = await this.post(`/dns/delete/${path(ref.zoneId)}/${path(ref.id)}`);
    if (isSuccess(reply)) return;
    const error = this.failure(reply);
    if (error.kind !== 'provider_error') throw error;
    // Porkbun answers a generic ERROR for an unknown id; only a lookup tells "already gone" from a real failure.
    const still = await this.call(`/dns/retrieve/${path(ref.zoneId)}/${path(ref.id)}`);
    if (records(still).length > 0) throw error;
  }

  private async call(endpoint: string, body: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const reply = await this.post(endpoint, body);
    if (isSuccess(reply)) return reply.json as Record<string, unknown>;
    throw this.failure(reply);
  }

  private post(endpoint: string, body: Record<string, unknown> = {}): Promise<HttpReply> {
    return this.http.request('POST', endpoint, { ...body, ...this.auth });
  }

  private failure(reply: HttpReply) {
    const json = reply.json as { message?: unknown; code?: unknown } | undefined;
    const message = typeof json?.message === 'string' ? json.message : undefined;
    const code = typeof json?.code === 'string' ? json.code : '';
    if (!this.http.isRateLimited(reply) && (code.startsWith('INVALID_API_KEY') || isAuthMessage(message))) {
      return this.http.error('auth_failed', `${message ?? code} (HTTP ${reply.status})`);
    }
    return this.http.failure(reply, message);
  }
}

function isSuccess(reply: HttpReply): boolean {
  return reply.status === 200 && (reply.json as { status?: unknown } | undefined)?.status === 'SUCCESS';
}

/**
 * Messages Porkbun gives for keys it does not accept ("Invalid API key. (001)/(002)", "All API
 * requests require an API key.") and for a domain whose API access is off: either way these
 * credentials cannot manage the domain, which the profile's owner must fix.
 */
function isAuthMessage(message: string | undefined): boolean {
  return message !== undefined && /api key|not opted in to api access/i.test(message);
}

function records(body: Record<string, unknown>): PbRecord[] {
  return Array.isArray(body.records) ? (body.records as PbRecord[]) : [];
}

function path(segment: string): string {
  return encodeURIComponent(segment);
}
