import type { SiteTypeId } from '@siteplane/contract';
import type { Kysely } from 'kysely';
import type { Actor } from '../../domain/auth/actor.js';
import { deployabilityOf, type TypeDeployDefaults } from '../../domain/deployments/type-defaults.js';
import { DomainError, notFound } from '../../domain/errors.js';
import { UUID_RE } from '../../domain/field-errors.js';
import type { Dialect } from '../../storage/database.js';
import type { Database } from '../../storage/schema.js';

export type SiteRow = Database['sites'];

/**
 * The one way the deployment use cases reach a site: live, and the actor's (another tenant's site
 * is not found, never forbidden); without an actor only for callers that authenticated the site
 * themselves (a push webhook verified by the site's own secret). Locked FOR UPDATE on PostgreSQL
 * when a change follows, so two changes of one site serialise.
 */
export async function findDeploySite(
  db: Kysely<Database>,
  scope: { actor: Actor | null; dialect?: Dialect; lock?: boolean },
  uuid: string,
): Promise<SiteRow> {
  if (!UUID_RE.test(uuid)) throw notFound('Site');
  let query = db.selectFrom('sites').selectAll().where('uuid', '=', uuid.toLowerCase()).where('deleted_at', 'is', null);
  if (scope.actor) query = query.where('team_uuid', 'in', scope.actor.teamUuids);
  const row = await (scope.lock && scope.dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
  if (!row) throw notFound('Site');
  return row;
}

/** The type's deploy defaults, or 422 not_deployable with the reason (WordPress, phpMyAdmin, Soketi). */
export function deployDefaults(site: SiteRow): TypeDeployDefaults {
  const d = deployabilityOf(site.type as SiteTypeId);
  if (!d.deployable) throw new DomainError('not_deployable', d.reason);
  return d.defaults;
}

/** A deployable site of the actor's, for a deploy route. */
export async function deployableSite(
  db: Kysely<Database>,
  scope: { actor: Actor | null; dialect?: Dialect; lock?: boolean },
  uuid: string,
): Promise<{ site: SiteRow; defaults: TypeDeployDefaults }> {
  const site = await findDeploySite(db, scope, uuid);
  return { site, defaults: deployDefaults(site) };
}
