import type { Actor } from '../domain/auth/actor.js';
import { ValidationError } from '../domain/field-errors.js';
import { defaultTeamFor } from '../storage/tokens.js';
import type { UseCaseDeps } from './deps.js';

/** The team a new admin record goes to: the one named (if the token reaches it) or the default. */
export async function teamFor(deps: UseCaseDeps, actor: Actor, named: string | undefined): Promise<string> {
  if (named === undefined) return defaultTeamFor(deps.db, actor);
  if (!actor.teamUuids.includes(named.toLowerCase())) {
    throw new ValidationError([{ field: 'team', code: 'not_found', message: 'No such team for this token.' }]);
  }
  return named.toLowerCase();
}
