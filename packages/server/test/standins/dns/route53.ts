/**
 * Stand-in for the Route 53 REST/XML API, version 2013-04-01 (docs.aws.amazon.com/Route53/latest/
 * APIReference): SigV4-checked requests, ListHostedZonesByName (paged by DNSName + HostedZoneId),
 * ListResourceRecordSets (from a name and type), ChangeResourceRecordSets (atomic batches, the
 * `<InvalidChangeBatch>` document on failure), GetChange (PENDING, then INSYNC), `<ErrorResponse>`
 * errors, and Throttling (HTTP 400, no Retry-After) when rate limited.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { DnsCredentials } from '../../../src/dns/provider.js';
import {
  applyChanges,
  type Change,
  compareSets,
  type HostedZone,
  newZone,
  normalize,
  recordsOf,
  sortKey,
  wireName,
} from './route53-zones.js';
import { checkSignature } from './sigv4.js';
import { type DnsStandin, type Incoming, type Reply, type StandinOptions, serve, Throttle } from './standin-server.js';
import { child, children, el, parseXml, text } from './xml.js';

export interface Route53StandinOptions extends StandinOptions {
  /** Private hosted zones, added beside the public ones (names may repeat). */
  privateZones?: string[];
  accessKeyId?: string;
  secretAccessKey?: string;
  /** GetChange answers INSYNC from this poll on. Default 1. */
  syncAfterPolls?: number;
  /** Runs before each ChangeResourceRecordSets is applied: a test plays another writer here. */
  beforeChange?: () => void;
}

export interface Route53Standin extends DnsStandin<DnsCredentials['aws']> {
  /** Writes a record set directly, as another tool would (TXT values quoted). */
  putSet(zone: string, set: { name: string; type: string; ttl: number; values: string[] }): void;
}

const XMLNS = 'https://route53.amazonaws.com/doc/2013-04-01/';
const PREFIX = '/2013-04-01';

const xml = (status: number, root: string, content: string[]): Reply => ({
  status,
  headers: { 'content-type': 'text/xml', 'x-amzn-requestid': randomUUID() },
  body: `<?xml version="1.0" encoding="UTF-8"?>\n<${root} xmlns="${XMLNS}">${content.join('')}</${root}>`,
});
const failure = (status: number, code: string, message: string): Reply =>
  xml(status, 'ErrorResponse', [
    el('Error', [el('Type', 'Sender'), el('Code', code), el('Message', message)]),
    el('RequestId', randomUUID()),
  ]);

export async function startRoute53Standin(options: Route53StandinOptions): Promise<Route53Standin> {
  const accessKeyId = options.accessKeyId ?? `AKIA${randomBytes(8).toString('hex').toUpperCase()}`;
  const secretAccessKey = options.secretAccessKey ?? randomBytes(30).toString('base64');
  const zones: HostedZone[] = [
    ...options.zones.map((name) => newZone(normalize(name), false)),
    ...(options.privateZones ?? []).map((name) => newZone(normalize(name), true)),
  ].sort((a, b) => compareSets({ name: a.name, type: a.id }, { name: b.name, type: b.id }));
  const changes = new Map<string, { submittedAt: string; polls: number }>();
  const throttle = new Throttle();

  const handler = (req: Incoming): Reply => {
    const signature = checkSignature(req, new Map([[accessKeyId, secretAccessKey]]));
    if (!signature.ok) return failure(403, signature.code, signature.message);
    if (throttle.take()) return failure(400, 'Throttling', 'Rate exceeded');
    const parts = req.path.replace(/\/$/, '').split('/').filter(Boolean); // 2013-04-01, …
    if (`/${parts[0]}` !== PREFIX) return failure(404, 'UnknownOperationException', `No operation at ${req.path}`);

    if (req.method === 'GET' && parts[1] === 'hostedzonesbyname' && parts.length === 2) return listZones(req);
    if (req.method === 'GET' && parts[1] === 'change' && parts.length === 3) return getChange(parts[2] ?? '');
    if (parts[1] === 'hostedzone' && parts[3] === 'rrset' && parts.length === 4) {
      const zone = zones.find((z) => z.id === parts[2]);
      if (!zone) return failure(404, 'NoSuchHostedZone', `No hosted zone found with ID: ${parts[2]}`);
      if (req.method === 'GET') return listSets(zone, req);
      if (req.method === 'POST') return change(zone, req.body);
    }
    return failure(404, 'UnknownOperationException', `No operation ${req.method} ${req.path}`);
  };

  const listZones = (req: Incoming): Reply => {
    const dnsName = req.query.get('dnsname');
    const fromId = req.query.get('hostedzoneid');
    if (fromId && !dnsName) return failure(400, 'InvalidInput', 'HostedZoneId requires DNSName');
    const max = Math.min(100, Number(req.query.get('maxitems') ?? 100));
    const key = dnsName ? sortKey(normalize(dnsName)) : '';
    const start = dnsName
      ? zones.findIndex((z) => sortKey(z.name) > key || (sortKey(z.name) === key && (!fromId || z.id >= fromId)))
      : 0;
    const from = start < 0 ? zones.length : start;
    const page = zones.slice(from, from + max);
    const next = zones[from + max];
    return xml(200, 'ListHostedZonesByNameResponse', [
      el('HostedZones', page.map(zoneXml)),
      dnsName ? el('DNSName', dnsName) : '',
      fromId ? el('HostedZoneId', fromId) : '',
      el('IsTruncated', next !== undefined),
      next ? el('NextDNSName', wireName(next.name)) + el('NextHostedZoneId', next.id) : '',
      el('MaxItems', max),
    ]);
  };

  const listSets = (zone: HostedZone, req: Incoming): Reply => {
    const name = req.query.get('name');
    const type = req.query.get('type');
    if (type && !name) return failure(400, 'InvalidInput', 'The input is not valid: type requires name');
    const max = Math.min(300, Number(req.query.get('maxitems') ?? 300));
    const from = name ? { name: normalize(name), type: type ?? '' } : undefined;
    const after = from ? zone.sets.filter((s) => compareSets(s, from) >= 0) : zone.sets;
    const page = after.slice(0, max);
    const next = after[max];
    return xml(200, 'ListResourceRecordSetsResponse', [
      el(
        'ResourceRecordSets',
        page.map((s) =>
          el('ResourceRecordSet', [
            el('Name', wireName(s.name)),
            el('Type', s.type),
            el('TTL', s.ttl),
            el(
              'ResourceRecords',
              s.values.map((v) => el('ResourceRecord', [el('Value', v)])),
            ),
          ]),
        ),
      ),
      el('IsTruncated', next !== undefined),
      next ? el('NextRecordName', wireName(next.name)) + el('NextRecordType', next.type) : '',
      el('MaxItems', max),
    ]);
  };

  const change = (zone: HostedZone, body: string): Reply => {
    const batch = child(parseXml(body), 'ChangeBatch');
    const parsed: Change[] = children(child(batch, 'Changes'), 'Change').map((c) => {
      const set = child(c, 'ResourceRecordSet');
      return {
        action: text(c, 'Action') ?? '',
        set: {
          name: normalize(text(set, 'Name') ?? ''),
          type: text(set, 'Type') ?? '',
          ttl: Number(text(set, 'TTL') ?? Number.NaN),
          values: children(child(set, 'ResourceRecords'), 'ResourceRecord').map((r) => text(r, 'Value') ?? ''),
        },
      };
    });
    if (parsed.length === 0) return failure(400, 'InvalidInput', 'ChangeBatch has no changes');
    options.beforeChange?.();
    const messages = applyChanges(zone, parsed);
    if (messages.length > 0) {
      return xml(400, 'InvalidChangeBatch', [
        el(
          'Messages',
          messages.map((m) => el('Message', m)),
        ),
        el('RequestId', randomUUID()),
      ]);
    }
    options.onChange?.(recordsOf(zones));
    const id = `C${randomBytes(7).toString('hex').toUpperCase()}`;
    const submittedAt = new Date().toISOString();
    changes.set(id, { submittedAt, polls: 0 });
    const comment = text(batch, 'Comment');
    return xml(200, 'ChangeResourceRecordSetsResponse', [changeInfo(id, 'PENDING', submittedAt, comment)]);
  };

  const getChange = (id: string): Reply => {
    const state = changes.get(id);
    if (!state) return failure(404, 'NoSuchChange', `Could not find resource with ID: ${id}`);
    state.polls++;
    const status = state.polls >= (options.syncAfterPolls ?? 1) ? 'INSYNC' : 'PENDING';
    return xml(200, 'GetChangeResponse', [changeInfo(id, status, state.submittedAt)]);
  };

  const server = await serve('', handler);
  return {
    url: server.url,
    credentials: { accessKeyId, secretAccessKey },
    records: () => recordsOf(zones),
    // Route 53 sends no Retry-After when it throttles.
    rateLimit: (count) => throttle.set(count, 0),
    requests: server.requests,
    close: server.close,
    putSet: (zoneName, set) => {
      const zone = zones.find((z) => z.name === normalize(zoneName) && !z.private);
      if (!zone) throw new Error(`no public zone ${zoneName}`);
      const messages = applyChanges(zone, [{ action: 'UPSERT', set: { ...set, name: normalize(set.name) } }]);
      if (messages.length > 0) throw new Error(messages.join('; '));
      options.onChange?.(recordsOf(zones));
    },
  };
}

function zoneXml(zone: HostedZone): string {
  return el('HostedZone', [
    el('Id', `/hostedzone/${zone.id}`),
    el('Name', wireName(zone.name)),
    el('CallerReference', `standin-${zone.id}`),
    el('Config', [el('PrivateZone', zone.private)]),
    el('ResourceRecordSetCount', zone.sets.length),
  ]);
}

function changeInfo(id: string, status: string, submittedAt: string, comment?: string): string {
  return el('ChangeInfo', [
    el('Id', `/change/${id}`),
    el('Status', status),
    el('SubmittedAt', submittedAt),
    comment ? el('Comment', comment) : '',
  ]);
}
