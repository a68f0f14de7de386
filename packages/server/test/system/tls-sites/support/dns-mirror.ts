/**
 * Mirrors what one DNS provider stand-in holds into pebble-challtestsrv, the DNS Pebble (and
 * DNS_RESOLVERS) ask: what the adapter writes through the provider's API becomes visible the way a
 * provider's nameservers would publish it. TXT values of a name are replaced as a set (challtestsrv
 * can only clear a whole name), A records likewise. Changes are applied in order.
 */
import type { StandinRecord } from '../../../standins/dns/standin-server.js';
import { mockDns } from '../../tls/pebble.js';

export class DnsMirror {
  private readonly published = new Map<string, string>();
  private queue: Promise<void> = Promise.resolve();
  private failure: unknown = null;

  /** The stand-ins' `onChange`. */
  readonly onChange = (records: StandinRecord[]): void => {
    const wanted = new Map<string, string[]>();
    for (const record of records) {
      if (record.type !== 'TXT' && record.type !== 'A') continue;
      const key = `${record.type} ${record.name}`;
      wanted.set(key, [...(wanted.get(key) ?? []), record.value]);
    }
    const keys = new Set([...this.published.keys(), ...wanted.keys()]);
    for (const key of keys) {
      const values = (wanted.get(key) ?? []).sort();
      const signature = values.join('\n');
      if ((this.published.get(key) ?? '') === signature) continue;
      if (values.length === 0) this.published.delete(key);
      else this.published.set(key, signature);
      this.queue = this.queue
        .then(() => this.apply(key, values))
        .catch((error: unknown) => {
          this.failure = error;
        });
    }
  };

  private async apply(key: string, values: string[]): Promise<void> {
    const [type, name] = key.split(' ') as ['TXT' | 'A', string];
    if (type === 'A') {
      if (values.length === 0) await mockDns.clearA(name);
      else await mockDns.addA(name, values);
      return;
    }
    await mockDns.clearTxt(name);
    for (const value of values) await mockDns.setTxt(name, value);
  }

  /** Waits for pending changes; fails when one could not be applied. */
  async flush(): Promise<void> {
    await this.queue;
    if (this.failure) throw this.failure;
  }

  /** Clears every name this mirror published (end of a suite). */
  async clear(): Promise<void> {
    this.onChange([]);
    await this.flush();
  }
}
