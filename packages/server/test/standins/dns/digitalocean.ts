/**
 * Stand-in for DigitalOcean API v2 (docs.digitalocean.com/reference/api): Bearer token, `{id, message}`
 * errors, `page`/`per_page` (default 20, at most 200) with absolute `links.pages.next` URLs on
 * api.digitalocean.com as the real API writes them, record names relative to the domain (`@`), and
 * 429 with Retry-After and `ratelimit-*` headers.
 */
import { randomBytes } from 'node:crypto';
import type { DnsCredentials } from '../../../src/dns/provider.js';
import {
  type DnsStandin,
  type Incoming,
  isIpv4,
  json,
  RecordStore,
  type Reply,
  relative,
  type StandinOptions,
  type StandinRecord,
  serve,
  Throttle,
} from './standin-server.js';

export interface DigitalOceanStandinOptions extends StandinOptions {
  token?: string;
}

const PUBLIC_BASE = 'https://api.digitalocean.com';
const error = (status: number, id: string, message: string, headers: Record<string, string> = {}): Reply =>
  json(status, { id, message }, headers);
const notFound = (): Reply => error(404, 'not_found', 'The resource you were accessing could not be found.');

export async function startDigitalOceanStandin(
  options: DigitalOceanStandinOptions,
): Promise<DnsStandin<DnsCredentials['digitalocean']>> {
  const token = options.token ?? `dop_v1_${randomBytes(16).toString('hex')}`;
  let nextId = 28448000;
  const store = new RecordStore(options.zones, () => String(nextId++), options.onChange);
  const throttle = new Throttle();

  const handler = (req: Incoming): Reply => {
    if (throttle.take()) {
      const reset = Math.ceil(Date.now() / 1000) + throttle.retryAfterSeconds;
      return error(429, 'too_many_requests', 'API Rate limit exceeded.', {
        'retry-after': String(throttle.retryAfterSeconds),
        'ratelimit-limit': '5000',
        'ratelimit-remaining': '0',
        'ratelimit-reset': String(reset),
      });
    }
    if (req.headers.authorization !== `Bearer ${token}`) return error(401, 'Unauthorized', 'Unable to authenticate you');

    const parts = req.path.split('/').filter(Boolean); // v2, domains, {name}, records, {id}
    if (req.method === 'GET' && req.path === '/v2/account') {
      return json(200, {
        account: {
          droplet_limit: 25,
          email: 'sammy@example.com',
          uuid: 'b6fr89dbf6d9156cace5f3c78dc9851d957381ef',
          status: 'active',
        },
      });
    }
    if (req.method === 'GET' && req.path === '/v2/domains') {
      return paged(
        '/v2/domains',
        'domains',
        store.zones.map((name) => ({ name, ttl: 1800, zone_file: '' })),
        req,
      );
    }
    if (parts[0] !== 'v2' || parts[1] !== 'domains' || parts[3] !== 'records') return notFound();
    const zone = store.zones.find((z) => z === parts[2]);
    if (!zone) return notFound();

    if (req.method === 'GET' && parts.length === 4) {
      // Filters: `name` is the fully qualified name, `type` needs `name`.
      const name = req.query.get('name')?.toLowerCase();
      const type = req.query.get('type');
      const found = store.inZone(zone).filter((r) => (!name || r.name === name) && (!type || r.type === type));
      return paged(
        `/v2/domains/${zone}/records`,
        'domain_records',
        found.map((r) => view(r)),
        req,
      );
    }
    if (req.method === 'POST' && parts.length === 4) return create(zone, req.body);
    if (req.method === 'DELETE' && parts.length === 5) {
      const record = store.inZone(zone).find((r) => r.id === parts[4]);
      if (!record) return notFound();
      store.remove(record.id);
      return { status: 204 };
    }
    return notFound();
  };

  const create = (zone: string, body: string): Reply => {
    const input = JSON.parse(body) as { type?: string; name?: string; data?: string; ttl?: number };
    const type = input.type ?? '';
    if (!['A', 'AAAA', 'CNAME', 'TXT', 'MX', 'NS', 'CAA', 'SRV'].includes(type)) {
      return error(422, 'unprocessable_entity', 'Type is not a valid record type');
    }
    if (!input.name) return error(422, 'unprocessable_entity', 'Name is invalid');
    if (!input.data) return error(422, 'unprocessable_entity', 'Data is invalid');
    if (type === 'A' && !isIpv4(input.data)) return error(422, 'unprocessable_entity', 'Data needs to be a valid IPv4 address');
    const ttl = input.ttl ?? 1800;
    if (ttl < 30) return error(422, 'unprocessable_entity', 'TTL must be at least 30 seconds');
    const name = input.name === '@' ? zone : `${input.name.toLowerCase()}.${zone}`;
    const record = store.add({ zone, name, type, value: input.data, ttl });
    return json(201, { domain_record: view(record) });
  };

  const server = await serve('', handler);
  return {
    url: server.url,
    credentials: { token },
    records: () => store.all(),
    rateLimit: (count, seconds) => throttle.set(count, seconds),
    requests: server.requests,
    close: server.close,
  };
}

function view(record: StandinRecord) {
  const name = relative(record.name, record.zone) || '@';
  return {
    id: Number(record.id),
    type: record.type,
    name,
    data: record.value,
    priority: null,
    port: null,
    ttl: record.ttl,
    weight: null,
    flags: null,
    tag: null,
  };
}

function paged(path: string, key: string, items: unknown[], req: Incoming): Reply {
  const page = Math.max(1, Number(req.query.get('page') ?? 1));
  const perPage = Math.min(200, Math.max(1, Number(req.query.get('per_page') ?? 20)));
  const last = Math.max(1, Math.ceil(items.length / perPage));
  const link = (p: number): string => {
    const query = new URLSearchParams(req.query);
    query.set('page', String(p));
    query.set('per_page', String(perPage));
    return `${PUBLIC_BASE}${path}?${query}`;
  };
  const pages: Record<string, string> = {};
  if (page > 1) Object.assign(pages, { first: link(1), prev: link(page - 1) });
  if (page < last) Object.assign(pages, { next: link(page + 1), last: link(last) });
  return json(200, {
    [key]: items.slice((page - 1) * perPage, page * perPage),
    links: Object.keys(pages).length > 0 ? { pages } : {},
    meta: { total: items.length },
  });
}
