import type { SecretBox } from '../crypto/secret-box.js';
import { DEFAULT_ALLOWED_TARGETS, parseAllowedTargets } from '../egress/address-policy.js';
import { EgressPolicy } from '../egress/egress-policy.js';
import type { Executor } from '../provisioning/executor.js';
import { DryRunExecutor } from '../provisioning/executors/dry-run.js';
import { LocalExecutor } from '../provisioning/executors/local.js';
import type { Database } from '../storage/schema.js';
import type { SshExecutorPool } from './ssh-executor-pool.js';

type ServerRow = Database['servers'];

export interface ExecutorPolicy {
  /** Where SSH may connect (SITEPLANE_ALLOWED_TARGETS). */
  egress: EgressPolicy;
  /** SITEPLANE_LOCAL_SERVER: whether a `local` server may run anything on this machine. */
  localServer: boolean;
}

/** The defaults of the configuration, for callers that do not pass the service's own. */
const DEFAULT_POLICY: ExecutorPolicy = {
  egress: new EgressPolicy(parseAllowedTargets(DEFAULT_ALLOWED_TARGETS).ranges),
  localServer: false,
};

/**
 * The executor for a server's connection kind. A dry-run server's probes ("is X there?") answer
 * "no", so its log lists every change a real server without those things would get.
 *
 * A `local` server registered while SITEPLANE_LOCAL_SERVER was on runs nothing once it is off; an
 * SSH server's address is resolved and checked at every connect, and ssh2 is given the checked
 * address, never the name (which could resolve elsewhere by then).
 */
export function executorFactory(secrets: SecretBox, sshPool: SshExecutorPool, policy: ExecutorPolicy = DEFAULT_POLICY) {
  return async (server: ServerRow, log: (line: string) => void): Promise<Executor> => {
    switch (server.connection) {
      case 'dry-run':
        return new DryRunExecutor({
          onCommand: (line) => log(`would run: ${line}`),
          answers: [{ match: isProbe, result: { code: 1 } }],
        });
      case 'local':
        if (!policy.localServer) throw new Error(LOCAL_SERVER_OFF);
        return new LocalExecutor();
      case 'ssh': {
        if (!server.private_key_enc || !server.host_key_sha256)
          throw new Error('the server is not verified yet (POST /api/v1/servers/<uuid>/verify)');
        // The server's one connection, shared with its other jobs (see ssh-executor-pool.ts).
        return sshPool.acquire(server.uuid, {
          host: await policy.egress.connectAddress(server.ip),
          port: server.ssh_port,
          username: server.ssh_user,
          privateKey: secrets.open(server.private_key_enc),
          hostFingerprint: server.host_key_sha256,
        });
      }
    }
  };
}

export const LOCAL_SERVER_OFF =
  'this server runs on the machine of Siteplane itself (connection "local"), which SITEPLANE_LOCAL_SERVER=off refuses';

/** Commands that only look (test, id, getent, command -v, dpkg -s …): on a dry run the answer is "absent". */
export function isProbe(argv: readonly string[]): boolean {
  const cmd = argv[0] ?? '';
  return (
    ['test', '[', 'id', 'getent', 'which', 'dpkg-query', 'pgrep'].includes(cmd) ||
    (cmd === 'command' && argv[1] === '-v') ||
    (cmd === 'dpkg' && argv[1] === '-s')
  );
}
