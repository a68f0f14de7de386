import { randomUUID } from 'node:crypto';
import type { Actor } from '../../domain/auth/actor.js';
import { ValidationError } from '../../domain/field-errors.js';
import { keyset } from '../../storage/paging.js';
import { uniqueViolation } from '../../storage/unique-violation.js';
import type { UseCaseDeps } from '../deps.js';
import { type PageRequest, toPage } from '../pagination.js';
import { findServer } from './manage-servers.js';

const userRecord = (r: { uuid: string; server_uuid: string; username: string; created_at: string }) => ({
  uuid: r.uuid,
  server: r.server_uuid,
  username: r.username,
  created_at: r.created_at,
});

const RESERVED = new Set(['root', 'daemon', 'bin', 'sys', 'www-data', 'nobody', 'postgres', 'mysql', 'sshd']);

/** POST /api/v1/servers/<uuid>/users: the system user that owns sites (created on the server by the first site). */
export async function createServerUser(deps: UseCaseDeps, actor: Actor, serverUuid: string, username: string) {
  const server = await findServer(deps, actor, serverUuid);
  if (RESERVED.has(username))
    throw new ValidationError([{ field: 'username', code: 'not_allowed', message: `"${username}" is a system account.` }]);
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

export async function listServerUsers(deps: UseCaseDeps, actor: Actor, serverUuid: string, page: PageRequest) {
  const server = await findServer(deps, actor, serverUuid);
  const rows = await keyset(
    deps.db.selectFrom('server_users').selectAll().where('server_uuid', '=', server.uuid),
    'server_users',
    page,
  ).execute();
  return toPage(rows, page, userRecord);
}
