import type { Kysely } from 'kysely';
import type { Ledger, LedgerEntry } from '../provisioning/step.js';
import type { Database } from './schema.js';

/**
 * The site's ledger of what it created on its server, in the database (ARCHITECTURE §3), in the
 * order it was recorded (a per-site sequence: timestamps of one millisecond would tie).
 */
export function ledgerFor(db: Kysely<Database>, siteUuid: string): Ledger {
  return {
    async record(entry: LedgerEntry) {
      const last = await db
        .selectFrom('site_resources')
        .select((eb) => eb.fn.max('seq').as('max'))
        .where('site_uuid', '=', siteUuid)
        .executeTakeFirst();
      await db
        .insertInto('site_resources')
        .values({
          site_uuid: siteUuid,
          seq: Number(last?.max ?? 0) + 1,
          kind: entry.kind,
          ref: entry.ref,
          details: JSON.stringify(entry.details ?? {}),
          created_at: new Date().toISOString(),
        })
        .onConflict((oc) => oc.columns(['site_uuid', 'kind', 'ref']).doNothing())
        .execute();
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
      const rows = await db.selectFrom('site_resources').selectAll().where('site_uuid', '=', siteUuid).orderBy('seq').execute();
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
