import type { Kysely } from 'kysely';
import { EMPTY_FACTS, type ServerFacts } from '../domain/servers/facts.js';
import type { Database } from './schema.js';

/**
 * Merges what a step installed into the server's stored facts. Jobs of one server run side by
 * side (one installs MariaDB while another installs PostgreSQL): each must merge into the facts
 * as they are now, not write back the copy it loaded when it started, or the last one to finish
 * erases what the others recorded. Callers hold the server's `facts` lock (read, merge, write).
 */
export async function mergeServerFacts(
  db: Kysely<Database>,
  serverUuid: string,
  patch: Partial<ServerFacts>,
  at: string,
): Promise<ServerFacts> {
  const row = await db.selectFrom('servers').select('facts').where('uuid', '=', serverUuid).executeTakeFirst();
  const merged: ServerFacts = { ...EMPTY_FACTS, ...(row ? (JSON.parse(row.facts) as ServerFacts) : {}), ...patch };
  await db
    .updateTable('servers')
    .set({ facts: JSON.stringify(merged), facts_at: at })
    .where('uuid', '=', serverUuid)
    .execute();
  return merged;
}
