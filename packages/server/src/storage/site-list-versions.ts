import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

/**
 * The version of a server's site list that migration 012's triggers keep on PostgreSQL, as text
 * (bigint arrives as a string from pg); '0' before the first change. Read per list request by
 * use-cases/sites/site-list-cache.ts.
 */
export function sharedListVersion(db: Kysely<Database>) {
  return async (server: string): Promise<string> => {
    const row = await db.selectFrom('site_list_versions').select('version').where('server_uuid', '=', server).executeTakeFirst();
    return row ? String(row.version) : '0';
  };
}
