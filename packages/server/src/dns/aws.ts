/**
 * Amazon Route 53 through @aws-sdk/client-route-53. Route 53 keeps record *sets* (all values of one
 * name and type together) and has no record ids, so adding or removing one value rewrites the set:
 * a DELETE of the exact set read and a CREATE of the new one in one batch. Route 53 applies a batch
 * all or nothing and refuses the DELETE when the set changed since it was read, so two challenges
 * writing the same name at once (a wildcard and its apex) cannot lose each other's value.
 */
import type { Change, Route53Client } from '@aws-sdk/client-route-53';
import { DEFAULT_TIMEOUT_MS, scrub } from './http.js';
import { candidateZones, normalizeName } from './names.js';
import { type DnsCredentials, DnsError, type DnsProvider, type DnsRecordRef, type DnsRecordType } from './provider.js';
import { awsError, isChangeConflict } from './route53-errors.js';
import { quoteTxt, unescapeName, unquoteTxt } from './route53-values.js';

export interface Route53Options {
  /** Endpoint instead of Route 53's own (AWS_ROUTE53_ENDPOINT, a stand-in in tests). */
  apiBase?: string;
  /** Per request. Default 30 s. */
  timeoutMs?: number;
  /** Wait until Route 53 reports a change INSYNC (on all its name servers) before returning. */
  waitForSync?: { timeoutMs: number; intervalMs: number };
}

/** New sets get this TTL unless asked otherwise; an existing set keeps its own (one TTL per set). */
const DEFAULT_TTL = 60;
/** Rounds of read, then write, when other writers keep changing the same set. */
const CONFLICT_ATTEMPTS = 4;
const MAX_ZONE_PAGES = 20;

/**
 * The SDK loads with the first request of a Route 53 profile: ~8 MB of modules that a process
 * without one never holds (resident memory, issue 13).
 */
type Route53Sdk = typeof import('@aws-sdk/client-route-53');

interface RecordSet {
  ttl: number;
  values: string[];
}

export class Route53Dns implements DnsProvider {
  private loaded: Promise<{ sdk: Route53Sdk; client: Route53Client }> | undefined;
  private readonly secrets: string[];

  constructor(
    private readonly credentials: DnsCredentials['aws'],
    private readonly options: Route53Options = {},
  ) {
    this.secrets = [credentials.secretAccessKey];
  }

  private route53(): Promise<{ sdk: Route53Sdk; client: Route53Client }> {
    this.loaded ??= import('@aws-sdk/client-route-53').then((sdk) => {
      const { credentials, options } = this;
      const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
      const client = new sdk.Route53Client({
        // Route 53 is global and signs in us-east-1; another region only selects another partition.
        region: credentials.region ?? 'us-east-1',
        credentials: { accessKeyId: credentials.accessKeyId, secretAccessKey: credentials.secretAccessKey },
        ...(options.apiBase ? { endpoint: options.apiBase } : {}),
        // The SDK's standard retry waits out throttling and transient failures with backoff.
        maxAttempts: 3,
        requestHandler: { connectionTimeout: timeout, requestTimeout: timeout },
      });
      return { sdk, client };
    });
    return this.loaded;
  }

  /** ListHostedZonesByName is cheap, authenticated, and a permission findZone needs anyway. */
  async verify(): Promise<void> {
    await this.send((sdk, client) => client.send(new sdk.ListHostedZonesByNameCommand({ MaxItems: 1 })));
  }

  async findZone(fqdn: string): Promise<string> {
    return (await this.zoneFor(fqdn)).name;
  }

  async createRecord(record: { name: string; type: DnsRecordType; value: string; ttl?: number }): Promise<DnsRecordRef> {
    const name = normalizeName(record.name);
    const zone = await this.zoneFor(name);
    await this.rewriteSet(zone.id, name, record.type, record.ttl ?? DEFAULT_TTL, (values) =>
      values.some((v) => same(record.type, v, record.value)) ? undefined : [...values, wire(record.type, record.value)],
    );
    return {
      id: `${name}|${record.type}|${record.value}`,
      zone: zone.name,
      zoneId: zone.id,
      name,
      type: record.type,
      value: record.value,
    };
  }

  async deleteRecord(ref: DnsRecordRef): Promise<void> {
    try {
      await this.rewriteSet(ref.zoneId, ref.name, ref.type, DEFAULT_TTL, (values) =>
        values.some((v) => same(ref.type, v, ref.value)) ? values.filter((v) => !same(ref.type, v, ref.value)) : undefined,
      );
    } catch (error) {
      // The whole hosted zone is gone, and the record with it.
      if (error instanceof DnsError && error.message.includes('NoSuchHostedZone')) return;
      throw error;
    }
  }

  /**
   * Asks for each candidate by name, longest first. Private zones are skipped: a CA resolves the
   * public one, and both may share a name. Zones come sorted by name, so paging stops once past it.
   */
  private async zoneFor(fqdn: string): Promise<{ id: string; name: string }> {
    for (const candidate of candidateZones(fqdn)) {
      let hostedZoneId: string | undefined;
      for (let page = 0; page < MAX_ZONE_PAGES; page++) {
        const out = await this.send((sdk, client) =>
          client.send(new sdk.ListHostedZonesByNameCommand({ DNSName: candidate, HostedZoneId: hostedZoneId, MaxItems: 100 })),
        );
        const sameName = (out.HostedZones ?? []).filter((z) => normalizeName(unescapeName(z.Name ?? '')) === candidate);
        const publicZone = sameName.find((z) => z.Config?.PrivateZone !== true);
        if (publicZone?.Id) return { id: publicZone.Id.replace(/^\/hostedzone\//, ''), name: candidate };
        const more = out.IsTruncated && normalizeName(unescapeName(out.NextDNSName ?? '')) === candidate;
        if (!more) break;
        hostedZoneId = out.NextHostedZoneId;
      }
    }
    throw new DnsError('zone_not_found', `aws: no public hosted zone of this account contains ${normalizeName(fqdn)}`);
  }

  /** Reads the set, lets `update` compute the new values (undefined: nothing to do), writes it back. */
  private async rewriteSet(
    zoneId: string,
    name: string,
    type: DnsRecordType,
    ttl: number,
    update: (values: string[]) => string[] | undefined,
  ): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const current = await this.readSet(zoneId, name, type);
      const next = update(current?.values ?? []);
      if (!next) return;
      const changes: Change[] = [];
      if (current) changes.push({ Action: 'DELETE', ResourceRecordSet: recordSet(name, type, current) });
      if (next.length > 0)
        changes.push({ Action: 'CREATE', ResourceRecordSet: recordSet(name, type, { ttl: current?.ttl ?? ttl, values: next }) });
      try {
        const { sdk, client } = await this.route53();
        const out = await client.send(
          new sdk.ChangeResourceRecordSetsCommand({
            HostedZoneId: zoneId,
            ChangeBatch: { Comment: 'siteplane', Changes: changes },
          }),
        );
        await this.waitForSync(out.ChangeInfo?.Id);
        return;
      } catch (error) {
        // Someone changed the set between our read and write: read again.
        if (isChangeConflict(error) && attempt < CONFLICT_ATTEMPTS) continue;
        throw error instanceof DnsError ? error : awsError(error, this.secrets);
      }
    }
  }

  private async readSet(zoneId: string, name: string, type: DnsRecordType): Promise<RecordSet | undefined> {
    const out = await this.send((sdk, client) =>
      client.send(
        new sdk.ListResourceRecordSetsCommand({
          HostedZoneId: zoneId,
          StartRecordName: name,
          StartRecordType: type,
          MaxItems: 1,
        }),
      ),
    );
    const set = out.ResourceRecordSets?.[0];
    if (!set || set.Type !== type || normalizeName(unescapeName(set.Name ?? '')) !== name || set.SetIdentifier) return undefined;
    return { ttl: set.TTL ?? DEFAULT_TTL, values: (set.ResourceRecords ?? []).map((r) => r.Value ?? '') };
  }

  private async waitForSync(changeId: string | undefined): Promise<void> {
    const wait = this.options.waitForSync;
    if (!wait || !changeId) return;
    const deadline = Date.now() + wait.timeoutMs;
    while (Date.now() < deadline) {
      const out = await this.send((sdk, client) => client.send(new sdk.GetChangeCommand({ Id: changeId })));
      if (out.ChangeInfo?.Status === 'INSYNC') return;
      await new Promise((resolve) => setTimeout(resolve, wait.intervalMs));
    }
    throw new DnsError(
      'propagation_timeout',
      `aws: change ${scrub(changeId, this.secrets)} not INSYNC after ${wait.timeoutMs} ms`,
    );
  }

  /** Runs one SDK call, turning its failures into DnsErrors. */
  private async send<Out>(run: (sdk: Route53Sdk, client: Route53Client) => Promise<Out>): Promise<Out> {
    try {
      const { sdk, client } = await this.route53();
      return await run(sdk, client);
    } catch (error) {
      throw awsError(error, this.secrets);
    }
  }
}

function wire(type: DnsRecordType, value: string): string {
  return type === 'TXT' ? quoteTxt(value) : value;
}

function same(type: DnsRecordType, wireValue: string, value: string): boolean {
  return type === 'TXT' ? unquoteTxt(wireValue) === value : wireValue === value;
}

function recordSet(name: string, type: DnsRecordType, set: RecordSet) {
  return { Name: name, Type: type, TTL: set.ttl, ResourceRecords: set.values.map((Value) => ({ Value })) };
}
