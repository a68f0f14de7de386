/**
 * Temporary domains in the operator's zone (FREE_DOMAIN_ZONE): an A record per site, created
 * through the zone's DNS profile before the site is provisioned and removed when it is deleted.
 * Ledgered (`dns_record`) before it is created, like every resource, so a job that died half-way
 * still removes it; the provider's record reference is added to the entry once known.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import type { DnsRecordRef } from '../../dns/provider.js';
import { EgressError } from '../../egress/egress-error.js';
import type { LedgerEntry, Step, StepContext } from '../../provisioning/step.js';
import { StepError } from '../../provisioning/steps/commands.js';
import { findEntry } from '../../provisioning/steps/ledger.js';
import { removalStep, stringDetail } from '../../provisioning/steps/remove/removal-step.js';
import type { FreeDomainZone } from '../../tls/certificate-plan.js';
import { profileFailure, profileProvider } from './profile-provider.js';
import type { SslDeps } from './tls-settings.js';

const TTL_SECONDS = 300;

/** The server's addresses: its `ip`, or what its host name resolves to. */
export async function serverAddresses(ip: string): Promise<string[]> {
  if (isIP(ip)) return [ip];
  return (await lookup(ip, { all: true })).map((a) => a.address);
}

export function ensureFreeDomainRecord(deps: SslDeps, zone: FreeDomainZone, serverIp: string): Step {
  return {
    name: 'ensure DNS record',
    async run(ctx: StepContext) {
      const name = ctx.site.domain;
      // A name in the operator's zone pointing at a loopback, link-local or internal address would
      // lend that zone to whatever runs there: the value passes the egress policy like a target.
      let addresses: string[];
      try {
        addresses = await deps.egress.resolve(serverIp);
      } catch (error) {
        if (error instanceof EgressError) throw new StepError(`no A record for ${name}: ${error.message}`);
        throw error;
      }
      const value = addresses.find((address) => isIP(address) === 4);
      if (!value) throw new StepError(`the server (${serverIp}) has no IPv4 address for the A record of ${name}`);
      if (ctx.exec.kind === 'dry-run') {
        ctx.log(`would create the A record ${name} → ${value} in ${zone.zone} through DNS profile ${zone.dnsProfile}`);
        return;
      }
      const entry: LedgerEntry = {
        kind: 'dns_record',
        ref: `${name} A ${value}`,
        details: { profile: zone.dnsProfile, name, type: 'A', value },
      };
      const known = await findEntry(ctx, entry.kind, entry.ref);
      if (known?.details?.record) {
        ctx.log(`A record ${name} → ${value} is in place`);
        return;
      }
      if (!known) await ctx.ledger.record(entry);
      const profile = await profileProvider(deps, zone.dnsProfile);
      let record: DnsRecordRef;
      try {
        record = await profile.dns.createRecord({ name, type: 'A', value, ttl: TTL_SECONDS });
      } catch (error) {
        throw profileFailure(profile, error);
      }
      // The ledger has no update: the entry is written again with the provider's reference.
      await ctx.ledger.forget(entry);
      await ctx.ledger.record({ ...entry, details: { ...entry.details, record } });
      ctx.log(`created the A record ${name} → ${value} in zone ${record.zone} (DNS profile "${profile.name}")`);
    },
  };
}

/** Removes every `dns_record` of the site's ledger; a record already gone counts as removed. */
export function removeDnsRecords(deps: SslDeps): Step {
  return removalStep('remove DNS records', ['dns_record'], async (ctx, entry) => {
    const profileUuid = stringDetail(entry, 'profile');
    const name = stringDetail(entry, 'name');
    const value = stringDetail(entry, 'value');
    if (!profileUuid || !name || !value) throw new StepError(`DNS record ${entry.ref} lacks its profile, name or value`);
    if (ctx.exec.kind === 'dry-run') {
      ctx.log(`would remove the A record ${name} → ${value}`);
      return 'removed';
    }
    const profile = await profileProvider(deps, profileUuid);
    try {
      // Without the provider's reference (the job died right after creating it), createRecord
      // finds the record by name and value; deleting it then removes it either way.
      const record =
        (entry.details?.record as DnsRecordRef | undefined) ??
        (await profile.dns.createRecord({ name, type: 'A', value, ttl: TTL_SECONDS }));
      await profile.dns.deleteRecord(record);
    } catch (error) {
      throw profileFailure(profile, error);
    }
    ctx.log(`removed the A record ${name} → ${value}`);
    return 'removed';
  });
}
