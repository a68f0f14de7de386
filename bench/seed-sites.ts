// The bench's fast fill: finished sites written straight into the service's SQLite file through the
// storage layer, in bulk inserts, instead of 10^5 creates through the API (each with its dry-run job:
// about an hour on a loaded 2-core machine). Each seeded site is a copy of one the API created and
// its job installed (its row, its create operation, its finished job), with its own uuids and
// domain, spread over the given servers. The running service is not told: its caches of those
// servers' lists and sites are not invalidated, so the bench seeds only servers it does not read.
import type { Kysely } from 'kysely';
import { openStorage } from '../packages/server/src/storage/database.js';
import type { Database } from '../packages/server/src/storage/schema.js';
import { timeOrderedUuid } from '../packages/server/src/storage/time-ordered-uuid.js';

/** Rows per INSERT (sites have ~30 columns: well under SQLite's 32,766 bound parameters). */
const ROWS_PER_INSERT = 500;
/** Sites per transaction: the service waits on SQLite's write lock (busy_timeout) meanwhile, so keep it short. */
const SITES_PER_TRANSACTION = 2_000;

export async function seedFinishedSites(options: {
  sqliteFile: string;
  /** A site the API created and whose create job finished: every copy is like it. */
  template: string;
  servers: { server: string; serverUser: string }[];
  count: number;
}): Promise<void> {
  const storage = await openStorage({ sqliteFile: options.sqliteFile });
  try {
    const { db } = storage;
    const site = await db.selectFrom('sites').selectAll().where('uuid', '=', options.template).executeTakeFirstOrThrow();
    const op = await db
      .selectFrom('operations')
      .selectAll()
      .where('site_uuid', '=', site.uuid)
      .where('kind', '=', 'create')
      .executeTakeFirstOrThrow();
    const job = await db.selectFrom('jobs').selectAll().where('operation_uuid', '=', op.uuid).executeTakeFirstOrThrow();
    if (site.status !== 'installed' || job.status !== 'done') throw new Error(`template site ${site.uuid} is not installed`);
    for (let from = 0; from < options.count; from += SITES_PER_TRANSACTION) {
      const n = Math.min(SITES_PER_TRANSACTION, options.count - from);
      const sites: Database['sites'][] = [];
      const operations: Database['operations'][] = [];
      const jobs: Database['jobs'][] = [];
      for (let i = 0; i < n; i++) {
        const k = from + i;
        const ids = options.servers[k % options.servers.length] as { server: string; serverUser: string };
        const uuid = timeOrderedUuid();
        const opUuid = timeOrderedUuid();
        sites.push({
          ...site,
          uuid,
          server_uuid: ids.server,
          server_user_uuid: ids.serverUser,
          domain: `seed${k}.bench.example.com`,
        });
        operations.push({ ...op, uuid: opUuid, site_uuid: uuid });
        jobs.push({ ...job, uuid: timeOrderedUuid(), operation_uuid: opUuid, site_uuid: uuid });
      }
      await db.transaction().execute(async (trx) => {
        await insertAll(trx, 'sites', sites);
        await insertAll(trx, 'operations', operations);
        await insertAll(trx, 'jobs', jobs);
      });
    }
  } finally {
    await storage.close();
  }
}

async function insertAll<T extends 'sites' | 'operations' | 'jobs'>(
  db: Kysely<Database>,
  table: T,
  rows: Database[T][],
): Promise<void> {
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT)
    await db
      .insertInto(table)
      .values(rows.slice(i, i + ROWS_PER_INSERT) as never)
      .execute();
}
