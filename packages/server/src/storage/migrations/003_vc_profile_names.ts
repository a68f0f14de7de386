import { type Kysely, sql } from 'kysely';

/**
 * A version-control profile's name is unique in its team (`siteplane vc` users pick profiles by
 * name). Until now a check enforced it, and two creations at once could both pass; the index makes
 * the database refuse the second. Names already taken twice (only such a race could make them)
 * keep their first holder; the others get their uuid appended, so the index can be built.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    UPDATE vc_profiles SET name = name || ' (' || uuid || ')'
    WHERE uuid NOT IN (SELECT MIN(uuid) FROM vc_profiles GROUP BY team_uuid, name)`.execute(db);
  await db.schema.createIndex('vc_profiles_team_name').unique().on('vc_profiles').columns(['team_uuid', 'name']).execute();
}
