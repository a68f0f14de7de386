import type { Kysely } from 'kysely';
import type { Ledger, LedgerEntry } from '../provisioning/step.js';
import type { Database } from './schema.js';

/** The site's ledger of what it created on its server, in the database (ARCHITECTURE §3). */
export function ledgerFor(db: Kysely<Database>, siteUuid: string): Ledger {
  return {
    async record(entry: LedgerEntry) {
      await db
        .insertInto('site_resources')
        .values({ site_uuid: siteUuid, kind: entry.kind, ref: entry.ref, details: JSON.stringify(entry.details ?? {}), created_at: new Date().toISOString() })
        .onConflict((oc) => oc.columns(['site_uuid', 'kind', 'ref']).doNothing())
        .execute();
    },
    async forget(entry) {
      await db.deleteFrom('site_resources').where('site_uuid', '=', siteUuid).where('kind', '=', entry.kind).where('ref', '=', entry.ref).execute();
    },
    async list() {
      const rows = await db.selectFrom('site_resources').selectAll().where('site_uuid', '=', siteUuid).orderBy('created_at').execute();
      return rows.map((r) => ({ kind: r.kind as LedgerEntry['kind'], ref: r.ref, details: JSON.parse(r.details) as Record<string, unknown> }));
    },
  };
}
