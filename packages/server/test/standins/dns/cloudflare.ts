/**
 * Stand-in for Cloudflare API v4 (developers.cloudflare.com/api): `/client/v4` base, Bearer token,
 * `{success, errors, messages, result, result_info}` envelopes, `page`/`per_page` paging, and the
 * error codes Cloudflare gives (1000 invalid token on verify, 10000 authentication error, 81044
 * record does not exist, 81058 identical record, 971 rate limited with Retry-After).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { DnsCredentials } from '../../../src/dns/provider.js';
import {
  type DnsStandin,
  type Incoming,
  inZone,
  isIpv4,
  json,
  RecordStore,
  type Reply,
  type StandinOptions,
  type StandinRecord,
  serve,
  Throttle,
} from './standin-server.js';

export interface CloudflareStandinOptions extends StandinOptions {
  apiToken?: string;
}

type CfError = { code: number; message: string };

const failWith = (status: number, headers: Record<string, string>, ...errors: CfError[]): Reply =>
  json(status, { success: false, errors, messages: [], result: null }, headers);
const fail = (status: number, ...errors: CfError[]): Reply => failWith(status, {}, ...errors);
const ok = (result: unknown, result_info?: unknown): Reply =>
  json(200, { success: true, errors: [], messages: [], result, ...(result_info ? { result_info } : {}) });

const zoneId = (name: string): string => createHash('md5').update(name).digest('hex');

export async function startCloudflareStandin(
  options: CloudflareStandinOptions,
): Promise<DnsStandin<DnsCredentials['cloudflare']>> {
  const apiToken = options.apiToken ?? `cf-${randomBytes(12).toString('hex')}`;
  const store = new RecordStore(options.zones, () => randomBytes(16).toString('hex'), options.onChange);
  const zones = store.zones.map((name) => ({ id: zoneId(name), name }));
  const throttle = new Throttle();

  const handler = (req: Incoming): Reply => {
    if (throttle.take()) {
      const headers = { 'retry-after': String(throttle.retryAfterSeconds) };
      return failWith(429, headers, { code: 971, message: 'Please wait and consider throttling your request speed' });
    }
    const auth = req.headers.authorization ?? '';
    if (!auth.startsWith('Bearer ')) {
      return fail(
        400,
        { code: 6003, message: 'Invalid request headers' },
        { code: 6111, message: 'Invalid format for Authorization header' },
      );
    }
    const valid = auth.slice('Bearer '.length) === apiToken;
    const parts = req.path.split('/').filter(Boolean);

    if (req.method === 'GET' && req.path === '/user/tokens/verify') {
      if (!valid) return fail(401, { code: 1000, message: 'Invalid API Token' });
      return ok({ id: createHash('md5').update(apiToken).digest('hex'), status: 'active' });
    }
    if (!valid) return fail(403, { code: 10000, message: 'Authentication error' });

    if (req.method === 'GET' && req.path === '/zones') {
      const name = req.query.get('name');
      return paged(
        zones.filter((z) => name === null || z.name === name.toLowerCase()).map((z) => ({ ...z, status: 'active' })),
        req,
        { fallback: 20, min: 5, max: 50 },
      );
    }
    if (parts[0] !== 'zones' || parts[2] !== 'dns_records' || parts.length > 4)
      return fail(400, { code: 7000, message: 'No route for that URI' });
    const zone = zones.find((z) => z.id === parts[1]);
    if (!zone)
      return fail(400, { code: 7003, message: `Could not route to ${req.path}, perhaps your object identifier is invalid?` });

    if (req.method === 'GET' && parts.length === 3) {
      const { type, name, content } = Object.fromEntries(['type', 'name', 'content'].map((k) => [k, req.query.get(k)]));
      const found = store
        .inZone(zone.name)
        .filter(
          (r) => (!type || r.type === type) && (!name || r.name === name.toLowerCase()) && (!content || r.value === content),
        );
      return paged(
        found.map((r) => view(r, zone.id)),
        req,
        { fallback: 100, min: 5, max: 5000 },
      );
    }
    if (req.method === 'POST' && parts.length === 3) return create(zone, req.body);
    if (req.method === 'DELETE' && parts.length === 4) {
      if (!store.inZone(zone.name).some((r) => r.id === parts[3]))
        return fail(404, { code: 81044, message: 'Record does not exist.' });
      store.remove(parts[3] ?? '');
      return ok({ id: parts[3] });
    }
    return fail(405, { code: 10405, message: 'Method not allowed for this URI' });
  };

  const create = (zone: { id: string; name: string }, body: string): Reply => {
    const input = JSON.parse(body) as { type?: string; name?: string; content?: string; ttl?: number };
    const type = input.type ?? '';
    const content = input.content ?? '';
    const ttl = input.ttl ?? 1;
    if (!['A', 'AAAA', 'CNAME', 'TXT', 'MX'].includes(type))
      return fail(400, { code: 9000, message: 'DNS record type is invalid.' });
    // Cloudflare takes the name relative (`www`, `@`) or fully qualified.
    const raw = (input.name ?? '').toLowerCase();
    const name = raw === '@' ? zone.name : inZone(raw, zone.name) ? raw : `${raw}.${zone.name}`;
    if (type === 'A' && !isIpv4(content))
      return fail(400, { code: 9005, message: 'Content for A record must be a valid IPv4 address.' });
    if (ttl !== 1 && (ttl < 60 || ttl > 86400)) {
      return fail(400, { code: 9021, message: 'Invalid TTL. Must be between 60 and 86400 seconds, or 1 for Automatic.' });
    }
    if (store.inZone(zone.name).some((r) => r.name === name && r.type === type && r.value === content)) {
      return fail(400, { code: 81058, message: 'An identical record already exists.' });
    }
    const record = store.add({ zone: zone.name, name, type, value: content, ttl });
    return ok(view(record, zone.id));
  };

  const server = await serve('/client/v4', handler);
  return {
    url: server.url,
    credentials: { apiToken },
    records: () => store.all(),
    rateLimit: (count, seconds) => throttle.set(count, seconds),
    requests: server.requests,
    close: server.close,
  };
}

function view(record: StandinRecord, zone_id: string) {
  return {
    id: record.id,
    zone_id,
    zone_name: record.zone,
    name: record.name,
    type: record.type,
    content: record.value,
    proxiable: record.type === 'A',
    proxied: false,
    ttl: record.ttl,
  };
}

function paged(items: unknown[], req: Incoming, perPage: { fallback: number; min: number; max: number }): Reply {
  const page = Math.max(1, Number(req.query.get('page') ?? 1));
  const asked = Number(req.query.get('per_page') ?? perPage.fallback);
  const per_page = Math.min(perPage.max, Math.max(perPage.min, asked));
  const slice = items.slice((page - 1) * per_page, page * per_page);
  const total_pages = Math.max(1, Math.ceil(items.length / per_page));
  return ok(slice, { page, per_page, count: slice.length, total_count: items.length, total_pages });
}
