import type { Actor } from '../../domain/auth/actor.js';
import { notFound } from '../../domain/errors.js';
import { UUID_RE } from '../../domain/field-errors.js';
import type { UseCaseDeps } from '../deps.js';

/** A live site the actor's teams own, or 404: another tenant's site is not told apart from none. */
export async function siteOfActor(deps: UseCaseDeps, actor: Actor, uuid: string): Promise<{ uuid: string; team_uuid: string }> {
  if (!UUID_RE.test(uuid)) throw notFound('Site');
  const row = await deps.db
    .selectFrom('sites')
    .select(['uuid', 'team_uuid'])
    .where('uuid', '=', uuid.toLowerCase())
    .where('deleted_at', 'is', null)
    .where('team_uuid', 'in', actor.teamUuids)
    .executeTakeFirst();
  if (!row) throw notFound('Site');
  return row;
}
