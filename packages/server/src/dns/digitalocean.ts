/**
 * DigitalOcean API v2 (https://docs.digitalocean.com/reference/api/): Bearer token, errors as
 * `{id, message}`, lists paged with `page`/`per_page` and a `links.pages.next` URL, record names
 * relative to the domain (`@` for the apex).
 */
import { type HttpAdapterOptions, type HttpReply, ProviderHttp } from './http.js';
import { longestZone, normalizeName, relativeName, ttlAtLeast } from './names.js';
import type { DnsCredentials, DnsProvider, DnsRecordRef, DnsRecordType } from './provider.js';

export const DIGITALOCEAN_API_BASE = 'https://api.digitalocean.com';

interface Links {
  links?: { pages?: { next?: string } };
}

interface DoRecord {
  id: number;
  type: string;
  name: string;
  data: string;
}

/** DigitalOcean's smallest TTL. */
const MIN_TTL = 30;
/** Largest page DigitalOcean serves. */
const PER_PAGE = 200;
/** A bound on paging, so a provider that keeps answering `next` cannot keep us looping. */
const MAX_PAGES = 500;

export class DigitalOceanDns implements DnsProvider {
  private readonly http: ProviderHttp;

  constructor(credentials: DnsCredentials['digitalocean'], options: HttpAdapterOptions = {}) {
    this.http = new ProviderHttp({
      provider: 'digitalocean',
      defaultBase: DIGITALOCEAN_API_BASE,
      adapter: options,
      headers: { authorization: `Bearer ${credentials.token}` },
      secrets: [credentials.token],
      retryAfterFallback: (reply) => resetSeconds(reply.headers),
    });
  }

  async verify(): Promise<void> {
    await this.call('GET', '/v2/account');
  }

  /** DigitalOcean has no lookup by suffix, so every domain of the account is listed. */
  async findZone(fqdn: string): Promise<string> {
    const domains = await this.listAll<{ name: string }>('/v2/domains', 'domains');
    const zone = longestZone(
      fqdn,
      domains.map((d) => d.name),
    );
    if (!zone) throw this.http.error('zone_not_found', `no domain of this account contains ${normalizeName(fqdn)}`);
    return zone;
  }

  async createRecord(record: { name: string; type: DnsRecordType; value: string; ttl?: number }): Promise<DnsRecordRef> {
    const name = normalizeName(record.name);
    const zone = await this.findZone(name);
    const base = `/v2/domains/${encodeURIComponent(zone)}/records`;
    const ref = (id: number): DnsRecordRef => ({
      id: String(id),
      zone,
      zoneId: zone,
      name,
      type: record.type,
      value: record.value,
    });

    // The name filter takes the fully qualified name.
    const existing = await this.listAll<DoRecord>(
      `${base}?type=${record.type}&name=${encodeURIComponent(name)}`,
      'domain_records',
    );
    const same = existing.find((r) => r.type === record.type && r.data === record.value);
    if (same) return ref(same.id);

    const body = await this.call('POST', base, {
      type: record.type,
      name: relativeName(name, zone) || '@',
      data: record.value,
      ttl: ttlAtLeast(record.ttl, MIN_TTL),
    });
    const created = (body as { domain_record?: DoRecord }).domain_record;
    if (typeof created?.id !== 'number') throw this.http.error('provider_error', 'record created but no id in the answer');
    return ref(created.id);
  }

  async deleteRecord(ref: DnsRecordRef): Promise<void> {
    const path = `/v2/domains/${encodeURIComponent(ref.zoneId)}/records/${encodeURIComponent(ref.id)}`;
    const reply = await this.http.request('DELETE', path);
    if (reply.status === 404) return; // already gone
    this.unwrap(reply);
  }

  /** Follows `links.pages.next`; only its page number is taken, so the token never goes to a host from a reply. */
  private async listAll<T>(path: string, key: string): Promise<T[]> {
    const items: T[] = [];
    const sep = path.includes('?') ? '&' : '?';
    let page = 1;
    for (let fetched = 0; fetched < MAX_PAGES; fetched++) {
      const body = (await this.call('GET', `${path}${sep}page=${page}&per_page=${PER_PAGE}`)) as Links & Record<string, unknown>;
      const list = body[key];
      if (!Array.isArray(list)) throw this.http.error('provider_error', `answer without ${key}`);
      items.push(...(list as T[]));
      const next = nextPage(body.links?.pages?.next);
      if (next === undefined || next <= page) return items;
      page = next;
    }
    throw this.http.error('provider_error', `more than ${MAX_PAGES} pages of ${key}`);
  }

  private async call(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<unknown> {
    return this.unwrap(await this.http.request(method, path, body));
  }

  private unwrap(reply: HttpReply): unknown {
    if (reply.status >= 200 && reply.status < 300) return reply.json;
    const message = (reply.json as { message?: unknown } | undefined)?.message;
    throw this.http.failure(reply, typeof message === 'string' ? message : undefined);
  }
}

function nextPage(link: string | undefined): number | undefined {
  if (!link) return undefined;
  try {
    const page = Number(new URL(link).searchParams.get('page'));
    return Number.isInteger(page) && page > 0 ? page : undefined;
  } catch {
    return undefined;
  }
}

/** DigitalOcean also sends `ratelimit-reset` (Unix time), used when Retry-After is missing. */
function resetSeconds(headers: Headers): number | undefined {
  const reset = Number(headers.get('ratelimit-reset'));
  if (!Number.isFinite(reset) || reset <= 0) return undefined;
  return Math.max(0, Math.ceil(reset - Date.now() / 1000));
}
