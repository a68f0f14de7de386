import { type Kysely, sql } from 'kysely';
import type { Ledger, LedgerEntry } from '../provisioning/step.js';
import { selectPerShape } from './query-per-shape.js';
import type { Database } from './schema.js';

/**
 * The site's ledger of what it created on its server, in the database (ARCHITECTURE §3), in the
 * order it was recorded (a per-site sequence: timestamps of one millisecond would tie).
 */
export function ledgerFor(db: Kysely<Database>, siteUuid: string): Ledger {
  return {
    async record(entry: LedgerEntry) {
      // One statement: the next sequence number is read by the insert itself (it was a read, then
      // the insert). The SELECT's WHERE lets SQLite's parser take ON CONFLICT as the upsert's.
      await sql`
        INSERT INTO site_resources (site_uuid, seq, kind, ref, details, created_at)
        SELECT ${siteUuid}, COALESCE(MAX(seq), 0) + 1, ${entry.kind}, ${entry.ref}, ${JSON.stringify(entry.details ?? {})},
          ${new Date().toISOString()}
        FROM site_resources WHERE site_uuid = ${siteUuid}
        ON CONFLICT (site_uuid, kind, ref) DO NOTHING`.execute(db);
    },
    async forget(entry) {
      await db
        .deleteFrom('site_resources')
        .where('site_uuid', '=', siteUuid)
        .where('kind', '=', entry.kind)
        .where('ref', '=', entry.ref)
        .execute();
    },
    async list() {
      // Read by every step (query-per-shape.ts: compiled once).
      const rows = await selectPerShape(db, 'ledgerList', [siteUuid], () =>
        db.selectFrom('site_resources').selectAll().where('site_uuid', '=', siteUuid).orderBy('seq'),
      );
      return rows.map((r) => ({
        kind: r.kind as LedgerEntry['kind'],
        ref: r.ref,
        details: JSON.parse(r.details) as Record<string, unknown>,
      }));
    },
  };
}

/** True when a live site of the server other than `siteUuid` lists this resource. */
export async function resourceUsedByOtherSite(
  db: Kysely<Database>,
  serverUuid: string,
  siteUuid: string,
  entry: Pick<LedgerEntry, 'kind' | 'ref'>,
): Promise<boolean> {
  const row = await db
    .selectFrom('site_resources')
    .innerJoin('sites', 'sites.uuid', 'site_resources.site_uuid')
    .select('sites.uuid')
    .where('sites.server_uuid', '=', serverUuid)
    .where('sites.deleted_at', 'is', null)
    .where('sites.uuid', '!=', siteUuid)
    .where('site_resources.kind', '=', entry.kind)
    .where('site_resources.ref', '=', entry.ref)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
