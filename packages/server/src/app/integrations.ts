import { DomainError } from '../domain/errors.js';
import type { ServerFacts } from '../domain/servers/facts.js';
import { detectFacts } from '../provisioning/detect-facts.js';
import { LocalExecutor } from '../provisioning/executors/local.js';
import { HostKeyMismatch, SshExecutor } from '../provisioning/executors/ssh.js';
import type { Integrations } from '../use-cases/integrations.js';
import { VcsProviderPool } from '../vcs/vcs-provider-pool.js';
import type { Config } from './config.js';
import { dnsProviderFactory } from './dns-providers.js';

/** The real outside world: SSH to servers, the DNS providers' and VCS providers' APIs. */
export function realIntegrations(config: Config): Integrations {
  const vcs = new VcsProviderPool();
  return {
    async inspectServer(server) {
      if (server.connection === 'local') {
        const exec = new LocalExecutor();
        return { hostKeySha256: null, facts: await detectFacts(exec) };
      }
      if (!server.privateKey) throw new DomainError('validation_failed', 'The server has no key pair.');
      const exec = new SshExecutor({
        host: server.ip,
        port: server.sshPort,
        username: server.sshUser,
        privateKey: server.privateKey,
        hostFingerprint: server.hostKeySha256,
      });
      try {
        const { fingerprint } = await exec.connect();
        const facts: ServerFacts = await detectFacts(exec);
        return { hostKeySha256: fingerprint, facts };
      } catch (error) {
        if (error instanceof HostKeyMismatch)
          throw new DomainError('upstream_auth_failed', 'The server presented another host key than the pinned one.');
        throw error;
      } finally {
        await exec.close();
      }
    },
    dnsProvider: dnsProviderFactory(config),
    vcsProvider: (uuid, profile) => vcs.get(uuid, profile),
  };
}
