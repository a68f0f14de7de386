import { DomainError } from '../domain/errors.js';
import { ValidationError } from '../domain/field-errors.js';
import { type EgressError, networkFailure } from '../egress/egress-error.js';
import type { EgressPolicy } from '../egress/egress-policy.js';
import { guardedFetch } from '../egress/guarded-fetch.js';
import { detectFacts } from '../provisioning/detect-facts.js';
import type { Executor } from '../provisioning/executor.js';
import { LocalExecutor } from '../provisioning/executors/local.js';
import { HostKeyMismatch, SshExecutor } from '../provisioning/executors/ssh.js';
import { readAccount } from '../provisioning/read-account.js';
import type { Integrations, ServerConnection } from '../use-cases/integrations.js';
import { VcsProviderPool } from '../vcs/vcs-provider-pool.js';
import type { Config } from './config.js';
import { dnsProviderFactory } from './dns-providers.js';
import { LOCAL_SERVER_OFF } from './executors.js';

/**
 * The real outside world: SSH to servers, the DNS providers' and VCS providers' APIs. Every
 * connection to a target a tenant chose goes through `egress` (ssh2 is given the checked address;
 * the VC providers' HTTPS and git check at connect time); the DNS providers' APIs are the
 * operator's configuration, not the tenant's, and are not restricted.
 */
export function realIntegrations(config: Config, egress: EgressPolicy): Integrations {
  const vcs = new VcsProviderPool({ fetch: guardedFetch(egress), checkHost: (host) => egress.resolve(host) });
  return {
    async inspectServer(server) {
      return withServer(config, egress, server, async (exec) => ({
        hostKeySha256: exec instanceof SshExecutor ? (await exec.connect()).fingerprint : null,
        facts: await detectFacts(exec),
      }));
    },
    inspectAccount(server, username) {
      return withServer(config, egress, server, (exec) => readAccount(exec, username));
    },
    dnsProvider: dnsProviderFactory(config),
    vcsProvider: (uuid, profile) => vcs.get(uuid, profile),
  };
}

/**
 * Runs fn with an executor for the server: this machine for `local` (when the operator allows it),
 * otherwise SSH through the egress policy, with the pinned host key (none before the first verify).
 * Connection failures become the API's errors.
 */
async function withServer<T>(
  config: Config,
  egress: EgressPolicy,
  server: ServerConnection,
  fn: (exec: Executor) => Promise<T>,
): Promise<T> {
  if (server.connection === 'local') {
    if (!config.localServer) {
      throw new ValidationError([{ field: 'connection', code: 'local_server_disabled', message: `${LOCAL_SERVER_OFF}.` }]);
    }
    return fn(new LocalExecutor());
  }
  if (!server.privateKey) throw new DomainError('validation_failed', 'The server has no key pair.');
  const target = `The server (${server.ip}:${server.sshPort})`;
  let exec: SshExecutor | null = null;
  try {
    exec = new SshExecutor({
      host: await egress.connectAddress(server.ip),
      port: server.sshPort,
      username: server.sshUser,
      privateKey: server.privateKey,
      hostFingerprint: server.hostKeySha256,
    });
    return await fn(exec);
  } catch (error) {
    if (error instanceof HostKeyMismatch)
      throw new DomainError('upstream_auth_failed', 'The server presented another host key than the pinned one.');
    const failure = networkFailure(error instanceof Error && error.cause ? error.cause : error, target);
    if (failure) throw egressDomainError(failure);
    throw error;
  } finally {
    await exec?.close();
  }
}

/** An egress failure as the API answers it. */
export function egressDomainError(error: EgressError): DomainError {
  const code = {
    target_not_allowed: 'target_not_allowed',
    unreachable: 'target_unreachable',
    timeout: 'target_timeout',
  } as const;
  return new DomainError(code[error.kind], `${error.message}.`);
}
