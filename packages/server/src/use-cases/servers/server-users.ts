import { randomUUID } from 'node:crypto';
import type { Actor } from '../../domain/auth/actor.js';
import { ValidationError } from '../../domain/field-errors.js';
import { privilegedAccount, privilegedName } from '../../domain/servers/privileged-accounts.js';
import { keyset } from '../../storage/paging.js';
import { uniqueViolation } from '../../storage/unique-violation.js';
import type { UseCaseDeps } from '../deps.js';
import { type PageRequest, toPage } from '../pagination.js';
import { findServer } from './manage-servers.js';
import { serverConnection } from './server-connection.js';

const userRecord = (r: { uuid: string; server_uuid: string; username: string; created_at: string }) => ({
  uuid: r.uuid,
  server: r.server_uuid,
  username: r.username,
  created_at: r.created_at,
});

/**
 * POST /api/v1/servers/<uuid>/users: the system user that owns sites (created on the server by the
 * first site). Privileged accounts are refused: by name at once, and on a verified ssh/local server
 * also by what the server says of an existing account (its uid and groups). The first site's
 * `ensure system user` step checks again, since the server can change in between.
 */
export async function createServerUser(deps: UseCaseDeps, actor: Actor, serverUuid: string, username: string) {
  const server = await findServer(deps, actor, serverUuid);
  const refused = privilegedName(username, server.ssh_user) ?? (await privilegedOnServer(deps, server, username));
  if (refused) throw new ValidationError([{ field: 'username', code: 'privileged_user', message: refused }]);
  const row = { uuid: randomUUID(), server_uuid: server.uuid, username, created_at: deps.clock.now().toISOString() };
  try {
    await deps.db.insertInto('server_users').values(row).execute();
  } catch (error) {
    if (uniqueViolation(error))
      throw new ValidationError([{ field: 'username', code: 'invalid_value', message: 'This user exists on the server.' }]);
    throw error;
  }
  return userRecord(row);
}

type ServerRow = Awaited<ReturnType<typeof findServer>>;

/** Why the server's own account of this name may not own sites; null when it has none or it is ordinary. */
async function privilegedOnServer(deps: UseCaseDeps, server: ServerRow, username: string): Promise<string | null> {
  // A dry-run server has no accounts to ask; an unverified one has no pinned host key yet.
  if (server.connection === 'dry-run' || server.status !== 'verified') return null;
  const account = await deps.integrations.inspectAccount(serverConnection(deps, server), username);
  return account ? privilegedAccount(username, account) : null;
}

export async function listServerUsers(deps: UseCaseDeps, actor: Actor, serverUuid: string, page: PageRequest) {
  const server = await findServer(deps, actor, serverUuid);
  const rows = await keyset(
    deps.db.selectFrom('server_users').selectAll().where('server_uuid', '=', server.uuid),
    'server_users',
    page,
  ).execute();
  return toPage(rows, page, userRecord);
}
