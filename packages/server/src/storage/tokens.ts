import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Actor } from '../domain/auth/actor.js';
import type { Database } from './schema.js';

export const hashToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export interface CreatedToken {
  token: string;
  uuid: string;
  accountUuid: string;
  teamUuid: string | null;
}

/**
 * Creates a token (256 random bits, prefix `sp_`, stored only as its SHA-256), creating the account
 * and team when they do not exist yet. Every account has a team named "default".
 */
export async function createToken(
  db: Kysely<Database>,
  input: { name: string; scope: 'read' | 'write'; account?: string; team?: string },
): Promise<CreatedToken> {
  const now = new Date().toISOString();
  return db.transaction().execute(async (trx) => {
    const accountName = input.account ?? 'default';
    let account = await trx.selectFrom('accounts').select('uuid').where('name', '=', accountName).executeTakeFirst();
    if (!account) {
      account = { uuid: randomUUID() };
      await trx.insertInto('accounts').values({ uuid: account.uuid, name: accountName, created_at: now }).execute();
      await trx
        .insertInto('teams')
        .values({ uuid: randomUUID(), account_uuid: account.uuid, name: 'default', created_at: now })
        .execute();
    }
    let teamUuid: string | null = null;
    if (input.team) {
      const team = await trx
        .selectFrom('teams')
        .select('uuid')
        .where('account_uuid', '=', account.uuid)
        .where('name', '=', input.team)
        .executeTakeFirst();
      teamUuid = team?.uuid ?? randomUUID();
      if (!team) {
        await trx
          .insertInto('teams')
          .values({ uuid: teamUuid, account_uuid: account.uuid, name: input.team, created_at: now })
          .execute();
      }
    }
    const token = `sp_${randomBytes(32).toString('base64url')}`;
    const uuid = randomUUID();
    await trx
      .insertInto('tokens')
      .values({
        uuid,
        account_uuid: account.uuid,
        team_uuid: teamUuid,
        name: input.name,
        scope: input.scope,
        hash: hashToken(token),
        created_at: now,
        revoked_at: null,
      })
      .execute();
    return { token, uuid, accountUuid: account.uuid, teamUuid };
  });
}

export async function revokeToken(db: Kysely<Database>, uuidOrName: string): Promise<number> {
  const result = await db
    .updateTable('tokens')
    .set({ revoked_at: new Date().toISOString() })
    .where((eb) => eb.or([eb('uuid', '=', uuidOrName), eb('name', '=', uuidOrName)]))
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function listTokens(db: Kysely<Database>) {
  return db
    .selectFrom('tokens')
    .innerJoin('accounts', 'accounts.uuid', 'tokens.account_uuid')
    .leftJoin('teams', 'teams.uuid', 'tokens.team_uuid')
    .select([
      'tokens.uuid',
      'tokens.name',
      'tokens.scope',
      'tokens.created_at',
      'tokens.revoked_at',
      'accounts.name as account',
      'teams.name as team',
    ])
    .orderBy('tokens.created_at')
    .execute();
}

/** The actor behind a presented token, or null when unknown or revoked. */
export async function actorForToken(db: Kysely<Database>, token: string): Promise<Actor | null> {
  const row = await db
    .selectFrom('tokens')
    .select(['uuid', 'account_uuid', 'team_uuid', 'scope', 'revoked_at'])
    .where('hash', '=', hashToken(token))
    .executeTakeFirst();
  if (!row || row.revoked_at) return null;
  const teamUuids = row.team_uuid
    ? [row.team_uuid]
    : (
        await db.selectFrom('teams').select('uuid').where('account_uuid', '=', row.account_uuid).orderBy('created_at').execute()
      ).map((t) => t.uuid);
  return { tokenUuid: row.uuid, accountUuid: row.account_uuid, teamUuids, scope: row.scope };
}

/** The team a new record of this actor goes to when the request names none. */
export async function defaultTeamFor(db: Kysely<Database>, actor: Actor): Promise<string> {
  if (actor.teamUuids.length === 1) return actor.teamUuids[0] as string;
  const team = await db
    .selectFrom('teams')
    .select('uuid')
    .where('account_uuid', '=', actor.accountUuid)
    .where('name', '=', 'default')
    .executeTakeFirst();
  return team?.uuid ?? (actor.teamUuids[0] as string);
}
