/**
 * Stand-in for Porkbun's JSON API v3 (porkbun.com/api/json/v3/documentation): `/api/json/v3` base,
 * POST everywhere with `apikey`/`secretapikey` in the body (or the X-API-Key headers), answers with
 * `status: SUCCESS | ERROR`, errors as HTTP 400, domain/listAll in pages of 1000 by `start`, record
 * names relative in requests and fully qualified in answers, TTL at least 600, exact duplicates
 * refused. Its rate limiter answers 503 with an openresty HTML page and no Retry-After, as Porkbun's does.
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
  type StandinOptions,
  type StandinRecord,
  serve,
  Throttle,
} from './standin-server.js';

export interface PorkbunStandinOptions extends StandinOptions {
  apiKey?: string;
  secretApiKey?: string;
}

const PAGE = 1000;
const ok = (body: Record<string, unknown> = {}): Reply => json(200, { status: 'SUCCESS', ...body });
const error = (message: string, code?: string): Reply => json(400, { status: 'ERROR', ...(code ? { code } : {}), message });
const RATE_LIMITED =
  '<html>\r\n<head><title>503 Service Temporarily Unavailable</title></head>\r\n<body>\r\n' +
  '<center><h1>503 Service Temporarily Unavailable</h1></center>\r\n<hr><center>openresty</center>\r\n</body>\r\n</html>\r\n';

export async function startPorkbunStandin(options: PorkbunStandinOptions): Promise<DnsStandin<DnsCredentials['porkbun']>> {
  const apiKey = options.apiKey ?? `pk1_${randomBytes(16).toString('hex')}`;
  const secretApiKey = options.secretApiKey ?? `sk1_${randomBytes(16).toString('hex')}`;
  let nextId = 106926650;
  const store = new RecordStore(options.zones, () => String(nextId++), options.onChange);
  const throttle = new Throttle();

  const handler = (req: Incoming): Reply => {
    if (throttle.take()) return { status: 503, headers: { 'content-type': 'text/html' }, body: RATE_LIMITED };
    if (req.method !== 'POST') return error('All API requests must be POST.');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body || '{}') as Record<string, unknown>;
    } catch {
      return error('All API requests must provide minimal required data.');
    }
    const key = body.apikey ?? req.headers['x-api-key'];
    const secret = body.secretapikey ?? req.headers['x-secret-api-key'];
    if (!key || !secret) return error('All API requests require an API key.');
    if (key !== apiKey) return error('Invalid API key. (001)', 'INVALID_API_KEYS_001');
    if (secret !== secretApiKey) return error('Invalid API key. (002)', 'INVALID_API_KEYS_002');

    const [group, action, domain, ...rest] = req.path.split('/').filter(Boolean);
    if (group === 'ping' && !action) return ok({ yourIp: '127.0.0.1' });
    if (group === 'domain' && action === 'listAll') {
      const start = Number(body.start ?? 0);
      return ok({ domains: store.zones.slice(start, start + PAGE).map(domainView) });
    }
    if (group !== 'dns' || !domain) return error('Invalid endpoint.');
    const zone = store.zones.find((z) => z === domain.toLowerCase());
    if (!zone) return error('Invalid domain.');
    const fqdn = (sub: string | undefined): string => (sub ? `${sub.toLowerCase()}.${zone}` : zone);

    switch (action) {
      case 'retrieve':
        return ok({
          records: store
            .inZone(zone)
            .filter((r) => !rest[0] || r.id === rest[0])
            .map(recordView),
        });
      case 'retrieveByNameType': {
        const [type, sub] = rest;
        return ok({
          records: store
            .inZone(zone)
            .filter((r) => r.type === type && r.name === fqdn(sub))
            .map(recordView),
        });
      }
      case 'create':
        return create(zone, fqdn(typeof body.name === 'string' ? body.name : ''), body);
      case 'delete': {
        const id = rest[0];
        if (!id) return error('You need to pass an ID.');
        if (!store.inZone(zone).some((r) => r.id === id)) return error('Delete error: Invalid record ID.');
        store.remove(id);
        return ok();
      }
      default:
        return error('Invalid endpoint.');
    }
  };

  const create = (zone: string, name: string, body: Record<string, unknown>): Reply => {
    const type = String(body.type ?? '');
    const content = String(body.content ?? '');
    if (!['A', 'MX', 'CNAME', 'ALIAS', 'TXT', 'NS', 'AAAA', 'SRV', 'TLSA', 'CAA', 'HTTPS', 'SVCB'].includes(type)) {
      return error('Create error: Invalid record type.');
    }
    if (!content) return error('Create error: Content is required.');
    if (type === 'A' && !isIpv4(content)) return error('Create error: Invalid IPv4 address.');
    if (store.inZone(zone).some((r) => r.name === name && r.type === type && r.value === content)) {
      return error('Create error: We were unable to create the DNS record.', 'DUPLICATE_RECORD');
    }
    // "The minimum and the default is 600 seconds."
    const ttl = Math.max(600, Number(body.ttl ?? 600) || 600);
    const record = store.add({ zone, name, type, value: content, ttl });
    return ok({ id: Number(record.id) });
  };

  const server = await serve('/api/json/v3', handler);
  return {
    url: server.url,
    credentials: { apiKey, secretApiKey },
    records: () => store.all(),
    // Porkbun's limiter sends no Retry-After, so the requested wait cannot be passed on.
    rateLimit: (count) => throttle.set(count, 0),
    requests: server.requests,
    close: server.close,
  };
}

function domainView(domain: string) {
  const tld = domain.split('.').pop() ?? '';
  return {
    domain,
    status: 'ACTIVE',
    tld,
    createDate: '2021-09-14 09:40:58',
    expireDate: '2027-09-14 09:40:58',
    securityLock: '1',
    whoisPrivacy: '1',
    autoRenew: '1',
    notLocal: 0,
  };
}

function recordView(record: StandinRecord) {
  return {
    id: record.id,
    name: record.name,
    type: record.type,
    content: record.value,
    ttl: String(record.ttl),
    prio: '0',
    notes: '',
  };
}
