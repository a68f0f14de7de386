import type { UseCaseDeps } from '../deps.js';
import type { ServerConnection } from '../integrations.js';
import type { findServer } from './manage-servers.js';

type ServerRow = Awaited<ReturnType<typeof findServer>>;

/** How the integrations reach a stored ssh/local server: its address, user, opened key and pinned host key. */
export function serverConnection(deps: UseCaseDeps, server: ServerRow): ServerConnection {
  // Callers handle dry-run servers themselves: they have nothing to connect to.
  if (server.connection === 'dry-run') throw new Error(`server ${server.uuid} is a dry-run server: nothing to connect to`);
  return {
    connection: server.connection,
    ip: server.ip,
    sshPort: server.ssh_port,
    sshUser: server.ssh_user,
    privateKey: server.private_key_enc ? deps.secrets.open(server.private_key_enc) : null,
    hostKeySha256: server.host_key_sha256,
  };
}
