import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import type { Static } from '@sinclair/typebox';
import type { CreateServerBody, FieldError } from '@siteplane/contract';
import { generateSshKeyPair } from '../../crypto/ssh-key-pair.js';
import type { Actor } from '../../domain/auth/actor.js';
import { DomainError, notFound } from '../../domain/errors.js';
import { UUID_RE, ValidationError } from '../../domain/field-errors.js';
import { hostnameProblem } from '../../domain/hostnames.js';
import { EMPTY_FACTS, type ServerFacts } from '../../domain/servers/facts.js';
import { EgressError } from '../../egress/egress-error.js';
import { keyset } from '../../storage/paging.js';
import type { UseCaseDeps } from '../deps.js';
import { type PageRequest, toPage } from '../pagination.js';
import { assertWithinQuota } from '../quotas.js';
import { teamFor } from '../team-of.js';
import { serverConnection } from './server-connection.js';
import { serverRecord } from './server-record.js';

/** POST /api/v1/servers: Siteplane generates the server's SSH key pair and returns the public key. */
export async function createServer(deps: UseCaseDeps, actor: Actor, body: Static<typeof CreateServerBody>) {
  const errors: FieldError[] = [];
  if (!isIP(body.ip) && hostnameProblem(body.ip.toLowerCase()) && body.ip !== 'localhost') {
    errors.push({ field: 'ip', code: 'invalid_format', message: 'ip must be an IP address or a host name.' });
  } else if (body.connection === 'ssh') {
    const refused = await refusedTarget(deps, body.ip);
    if (refused) errors.push({ field: 'ip', code: 'target_not_allowed', message: refused });
  }
  // `local` runs the tenant's sites as root next to secret.key and every tenant's sealed keys.
  if (body.connection === 'local' && !deps.localServer) {
    errors.push({
      field: 'connection',
      code: 'local_server_disabled',
      message:
        'connection "local" runs sites on the machine of Siteplane itself, which this Siteplane refuses (SITEPLANE_LOCAL_SERVER=off).',
    });
  }
  if (errors.length > 0) throw new ValidationError(errors);
  if (body.facts && body.connection !== 'dry-run') {
    throw new ValidationError([
      { field: 'facts', code: 'not_allowed', message: 'Facts are declared for dry-run servers only; verify detects them.' },
    ]);
  }
  const team = await teamFor(deps, actor, body.team);
  const now = deps.clock.now().toISOString();
  const keys = body.connection === 'ssh' ? generateSshKeyPair(`siteplane@${body.name}`) : null;
  const facts: ServerFacts = { ...EMPTY_FACTS, ...(body.facts as Partial<ServerFacts> | undefined) };
  const row = {
    uuid: randomUUID(),
    team_uuid: team,
    name: body.name,
    ip: body.ip,
    connection: body.connection as 'ssh' | 'local' | 'dry-run',
    ssh_port: body.sshPort ?? 22,
    ssh_user: body.sshUser ?? 'root',
    public_key: keys?.public ?? null,
    private_key_enc: keys ? deps.secrets.seal(keys.private) : null,
    host_key_sha256: null,
    facts: JSON.stringify(facts),
    facts_source: body.connection === 'dry-run' ? ('declared' as const) : ('none' as const),
    facts_at: body.connection === 'dry-run' ? now : null,
    status: body.connection === 'dry-run' ? ('verified' as const) : ('unverified' as const),
    created_at: now,
    updated_at: now,
    deleted_at: null,
  };
  await deps.db.transaction().execute(async (trx) => {
    await assertWithinQuota(trx, deps.dialect, deps.quotas, team, 'servers');
    await trx.insertInto('servers').values(row).execute();
  });
  return serverRecord(row);
}

export async function findServer(deps: UseCaseDeps, actor: Actor, uuid: string) {
  if (!UUID_RE.test(uuid)) throw notFound('Server');
  const row = await deps.db
    .selectFrom('servers')
    .selectAll()
    .where('uuid', '=', uuid.toLowerCase())
    .where('deleted_at', 'is', null)
    .where('team_uuid', 'in', actor.teamUuids)
    .executeTakeFirst();
  if (!row) throw notFound('Server');
  return row;
}

export async function listServers(deps: UseCaseDeps, actor: Actor, page: PageRequest) {
  const rows = await keyset(
    deps.db.selectFrom('servers').selectAll().where('team_uuid', 'in', actor.teamUuids).where('deleted_at', 'is', null),
    'servers',
    page,
  ).execute();
  return toPage(rows, page, serverRecord);
}

/** A server with live sites is not removed: its sites must be deleted (and cleaned up) first. */
export async function deleteServer(deps: UseCaseDeps, actor: Actor, uuid: string) {
  const server = await findServer(deps, actor, uuid);
  const live = await deps.db
    .selectFrom('sites')
    .select('uuid')
    .where('server_uuid', '=', server.uuid)
    .where('deleted_at', 'is', null)
    .limit(1)
    .execute();
  if (live.length > 0) throw new DomainError('conflict', 'The server still has sites; delete them first.');
  await deps.db
    .updateTable('servers')
    .set({ deleted_at: deps.clock.now().toISOString() })
    .where('uuid', '=', server.uuid)
    .execute();
}

/**
 * Why the egress policy refuses `ip` (also a name resolving to a refused address), or null. A name
 * that does not resolve yet is accepted: verify checks again, at connect time, as every job does.
 */
async function refusedTarget(deps: UseCaseDeps, ip: string): Promise<string | null> {
  try {
    await deps.egress.resolve(ip);
    return null;
  } catch (error) {
    if (error instanceof EgressError && error.kind === 'target_not_allowed') return `${error.message}.`;
    return null;
  }
}

/** POST /api/v1/servers/<uuid>/verify: connect, pin the host key, record the facts. */
export async function verifyServer(deps: UseCaseDeps, actor: Actor, uuid: string) {
  const server = await findServer(deps, actor, uuid);
  const now = deps.clock.now().toISOString();
  if (server.connection === 'dry-run') {
    await deps.db.updateTable('servers').set({ status: 'verified', updated_at: now }).where('uuid', '=', server.uuid).execute();
    return serverRecord({ ...server, status: 'verified' });
  }
  try {
    const result = await deps.integrations.inspectServer(serverConnection(deps, server));
    const update = {
      status: 'verified' as const,
      host_key_sha256: result.hostKeySha256,
      facts: JSON.stringify(result.facts),
      facts_source: 'detected' as const,
      facts_at: now,
      updated_at: now,
    };
    await deps.db.updateTable('servers').set(update).where('uuid', '=', server.uuid).execute();
    return serverRecord({ ...server, ...update });
  } catch (error) {
    await deps.db
      .updateTable('servers')
      .set({ status: 'unreachable', updated_at: now })
      .where('uuid', '=', server.uuid)
      .execute();
    if (error instanceof DomainError || error instanceof ValidationError) throw error;
    throw new DomainError('upstream_unavailable', `Could not verify the server: ${(error as Error).message}`);
  }
}
