/**
 * The Route 53 stand-in's data: hosted zones holding record *sets* (one TTL and all values of a name
 * and type), ordered as Route 53 lists them (labels reversed, then type), and change batches applied
 * all or nothing with Route 53's validation messages.
 */
import { createHash } from 'node:crypto';
import { isIpv4, type StandinRecord } from './standin-server.js';

export interface RecordSet {
  name: string;
  type: string;
  ttl: number;
  /** As sent on the wire: TXT values quoted. */
  values: string[];
  /** The apex NS and SOA sets every zone has; not reported as records. */
  system?: boolean;
}

export interface HostedZone {
  id: string;
  name: string;
  private: boolean;
  sets: RecordSet[];
}

export interface Change {
  action: string;
  set: RecordSet;
}

/** Lower case, no trailing dot, octal escapes (`\052` for `*`) decoded. */
export function normalize(name: string): string {
  return name
    .replace(/\\(\d{3})/g, (_, d: string) => String.fromCharCode(Number.parseInt(d, 8)))
    .toLowerCase()
    .replace(/\.$/, '');
}

/** The form Route 53 answers with: trailing dot, characters other than letters, digits, - and _ as octal escapes. */
export function wireName(name: string): string {
  return `${name.replace(/[^a-z0-9_.-]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`)}.`;
}

/** Route 53 orders names by their labels from the right: `com.example.www`. */
export const sortKey = (name: string): string => name.split('.').reverse().join('.');

export function compareSets(a: { name: string; type: string }, b: { name: string; type: string }): number {
  const ka = sortKey(a.name);
  const kb = sortKey(b.name);
  if (ka !== kb) return ka < kb ? -1 : 1;
  return a.type === b.type ? 0 : a.type < b.type ? -1 : 1;
}

export function newZone(name: string, isPrivate: boolean): HostedZone {
  const id = `Z${createHash('sha256').update(`${name}/${isPrivate}`).digest('hex').toUpperCase().slice(0, 20)}`;
  return {
    id,
    name,
    private: isPrivate,
    sets: [
      { name, type: 'NS', ttl: 172800, values: ['ns-1.awsdns-01.org.', 'ns-2.awsdns-02.co.uk.'], system: true },
      {
        name,
        type: 'SOA',
        ttl: 900,
        values: ['ns-1.awsdns-01.org. awsdns-hostmaster.amazon.com. 1 7200 900 1209600 86400'],
        system: true,
      },
    ],
  };
}

/** Validates and applies a batch; returns Route 53's messages and leaves the zone untouched when any fails. */
export function applyChanges(zone: HostedZone, changes: Change[]): string[] {
  const sets = zone.sets.map((s) => ({ ...s, values: [...s.values] }));
  const messages: string[] = [];
  for (const { action, set } of changes) {
    const label = `[name='${wireName(set.name)}', type='${set.type}']`;
    if (set.name !== zone.name && !set.name.endsWith(`.${zone.name}`)) {
      messages.push(`RRSet with DNS name ${wireName(set.name)} is not permitted in zone ${wireName(zone.name)}`);
      continue;
    }
    if (!Number.isInteger(set.ttl) || set.ttl < 0 || set.values.length === 0) {
      messages.push(
        `Invalid request: Expected exactly one of [AliasTarget, all of [TTL, and ResourceRecords], or TrafficPolicyInstanceId], but found none in Change with [Action=${action}, Name=${wireName(set.name)}, Type=${set.type}, SetIdentifier=null]`,
      );
      continue;
    }
    const invalid = set.values.map((value) => invalidValue(set.type, value)).find(Boolean);
    if (invalid) {
      messages.push(invalid);
      continue;
    }
    if (new Set(set.values).size !== set.values.length) {
      messages.push(`Duplicate Resource Record: '${set.values.join(',')}'`);
      continue;
    }
    const index = sets.findIndex((s) => s.name === set.name && s.type === set.type);
    const current = sets[index];
    if (action === 'CREATE') {
      if (current) messages.push(`Tried to create resource record set ${label} but it already exists`);
      else sets.push(set);
    } else if (action === 'DELETE') {
      if (!current) messages.push(`Tried to delete resource record set ${label} but it was not found`);
      else if (current.ttl !== set.ttl || [...current.values].sort().join('\n') !== [...set.values].sort().join('\n')) {
        messages.push(`Tried to delete resource record set ${label} but the values provided do not match the current values`);
      } else sets.splice(index, 1);
    } else if (action === 'UPSERT') {
      if (current) sets.splice(index, 1, set);
      else sets.push(set);
    } else {
      messages.push(`Invalid action ${action}`);
    }
  }
  if (messages.length === 0) zone.sets = sets.sort(compareSets);
  return messages;
}

function invalidValue(type: string, value: string): string | undefined {
  if (type === 'TXT' && !/^("(?:[^"\\]|\\.)*"\s*)+$/.test(value)) {
    return `Invalid Resource Record: 'FATAL problem: InvalidCharacterString (Value should be enclosed in quotation marks) encountered with '${value}''`;
  }
  if (type === 'A' && !isIpv4(value)) {
    return `Invalid Resource Record: 'FATAL problem: ARRDATAIllegalIPv4Address (Value is not a valid IPv4 address) encountered with '${value}''`;
  }
  return undefined;
}

/** Records as a resolver sees them: one per value, TXT strings unquoted and joined. */
export function recordsOf(zones: HostedZone[]): StandinRecord[] {
  return zones.flatMap((zone) =>
    zone.sets
      .filter((set) => !set.system)
      .flatMap((set) =>
        set.values.map((value) => ({
          id: `${zone.id}/${set.name}/${set.type}/${value}`,
          zone: zone.name,
          name: set.name,
          type: set.type,
          value:
            set.type === 'TXT'
              ? [...value.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => (m[1] ?? '').replace(/\\(.)/g, '$1')).join('')
              : value,
          ttl: set.ttl,
        })),
      ),
  );
}
