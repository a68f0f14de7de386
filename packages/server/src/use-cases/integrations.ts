import type { DnsProvider, DnsProviderName } from '../dns/provider.js';
import type { ServerFacts } from '../domain/servers/facts.js';
import type { AccountFacts } from '../domain/servers/privileged-accounts.js';
import type { VcsProfileConfig, VcsProvider } from '../vcs/provider.js';

export interface ServerConnection {
  connection: 'ssh' | 'local';
  ip: string;
  sshPort: number;
  sshUser: string;
  privateKey: string | null;
  hostKeySha256: string | null;
}

/** The outside world as the use cases see it; app/ builds the real adapters. */
export interface Integrations {
  /** Connects to an ssh/local server, pins its host key and reads its facts. */
  inspectServer(server: ServerConnection): Promise<{ hostKeySha256: string | null; facts: ServerFacts }>;
  /** An account's uid and groups on a verified ssh/local server (its pinned host key), or null when it has none. */
  inspectAccount(server: ServerConnection, username: string): Promise<AccountFacts | null>;
  dnsProvider(provider: DnsProviderName, credentials: Record<string, string>): DnsProvider;
  vcsProvider(profileUuid: string, config: VcsProfileConfig): VcsProvider;
}
