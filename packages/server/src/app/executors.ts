import type { SecretBox } from '../crypto/secret-box.js';
import type { Executor } from '../provisioning/executor.js';
import { DryRunExecutor } from '../provisioning/executors/dry-run.js';
import { LocalExecutor } from '../provisioning/executors/local.js';
import type { Database } from '../storage/schema.js';
import type { SshExecutorPool } from './ssh-executor-pool.js';

type ServerRow = Database['servers'];

/**
 * The executor for a server's connection kind. A dry-run server's probes ("is X there?") answer
 * "no", so its log lists every change a real server without those things would get.
 */
export function executorFactory(secrets: SecretBox, sshPool: SshExecutorPool) {
  return async (server: ServerRow, log: (line: string) => void): Promise<Executor> => {
    switch (server.connection) {
      case 'dry-run':
        return new DryRunExecutor({
          onCommand: (line) => log(`would run: ${line}`),
          answers: [{ match: isProbe, result: { code: 1 } }],
        });
      case 'local':
        return new LocalExecutor();
      case 'ssh': {
        if (!server.private_key_enc || !server.host_key_sha256)
          throw new Error('the server is not verified yet (POST /api/v1/servers/<uuid>/verify)');
        // The server's one connection, shared with its other jobs (see ssh-executor-pool.ts).
        return sshPool.acquire(server.uuid, {
          host: server.ip,
          port: server.ssh_port,
          username: server.ssh_user,
          privateKey: secrets.open(server.private_key_enc),
          hostFingerprint: server.host_key_sha256,
        });
      }
    }
  };
}

/** Commands that only look (test, id, getent, command -v, dpkg -s …): on a dry run the answer is "absent". */
export function isProbe(argv: readonly string[]): boolean {
  const cmd = argv[0] ?? '';
  return (
    ['test', '[', 'id', 'getent', 'which', 'dpkg-query', 'pgrep'].includes(cmd) ||
    (cmd === 'command' && argv[1] === '-v') ||
    (cmd === 'dpkg' && argv[1] === '-s')
  );
}
