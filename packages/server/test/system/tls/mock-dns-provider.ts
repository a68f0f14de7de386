/**
 * A DnsProvider (dns/provider.ts) whose zone is pebble-challtestsrv's mock DNS, so DNS-01 runs
 * through the same adapter (dns01HooksFor) as a stored DNS profile does in production.
 */
import type { DnsProvider, DnsRecordRef } from '../../../src/dns/provider.js';
import { mockDns } from './pebble.js';

export class MockDnsProvider implements DnsProvider {
  readonly created: DnsRecordRef[] = [];
  readonly deleted: DnsRecordRef[] = [];
  private next = 0;

  async verify(): Promise<void> {}

  async findZone(fqdn: string): Promise<string> {
    return fqdn.split('.').slice(-2).join('.');
  }

  async createRecord(record: { name: string; type: 'TXT' | 'A'; value: string }): Promise<DnsRecordRef> {
    if (record.type === 'TXT') await mockDns.setTxt(record.name, record.value);
    else await mockDns.addA(record.name, [record.value]);
    const zone = await this.findZone(record.name);
    const ref: DnsRecordRef = {
      id: String(++this.next),
      zone,
      zoneId: zone,
      name: record.name,
      type: record.type,
      value: record.value,
    };
    this.created.push(ref);
    return ref;
  }

  /**
   * challtestsrv can only clear every value of a name, where a real provider removes the one
   * record; fine here, since the issuer removes records only after all validation is done.
   */
  async deleteRecord(ref: DnsRecordRef): Promise<void> {
    if (ref.type === 'TXT') await mockDns.clearTxt(ref.name);
    else await mockDns.clearA(ref.name);
    this.deleted.push(ref);
  }
}
