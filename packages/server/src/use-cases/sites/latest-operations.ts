import type { Kysely } from 'kysely';
import type { Database } from '../../storage/schema.js';

type Op = Pick<Database['operations'], 'uuid' | 'site_uuid' | 'kind' | 'status' | 'created_at' | 'finished_at'>;

/** The latest operation of each site, in one query. */
export async function latestOperations(db: Kysely<Database>, siteUuids: string[]): Promise<Map<string, Op>> {
  const latest = new Map<string, Op>();
  if (siteUuids.length === 0) return latest;
  const ops = await db
    .selectFrom('operations')
    .select(['uuid', 'site_uuid', 'kind', 'status', 'created_at', 'finished_at'])
    .where('site_uuid', 'in', siteUuids)
    .orderBy('created_at')
    .execute();
  for (const op of ops) latest.set(op.site_uuid, op);
  return latest;
}
