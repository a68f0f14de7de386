import type { Kysely } from 'kysely';

/**
 * A team's live sites, counted by the site quota (use-cases/quotas.ts) inside every site create:
 * without this index that count read the whole sites table, once per create.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.createIndex('sites_team_live').on('sites').columns(['team_uuid', 'deleted_at']).execute();
}
