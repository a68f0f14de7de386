import type { DnsProvider, DnsProviderName } from '../dns/provider.js';
import type { ServerFacts } from '../domain/servers/facts.js';
import type { VcsProfileConfig, VcsProvider } from '../vcs/provider.js';

/** The outside world as the use cases see it; app/ builds the real adapters. */
export interface Integrations {
  /** Connects to an ssh/local server, pins its host key and reads its facts. */
  inspectServer(server: {
    connection: 'ssh' | 'local';
    ip: string;
    sshPort: number;
    sshUser: string;
    privateKey: string | null;
    hostKeySha256: string | null;
  }): Promise<{ hostKeySha256: string | null; facts: ServerFacts }>;
  dnsProvider(provider: DnsProviderName, credentials: Record<string, string>): DnsProvider;
  vcsProvider(profileUuid: string, config: VcsProfileConfig): VcsProvider;
}
