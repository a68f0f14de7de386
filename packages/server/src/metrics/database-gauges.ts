import { type Kysely, sql } from 'kysely';
import type { Clock } from '../app/clock.js';
import type { Database } from '../storage/schema.js';
import type { ServiceMetrics } from './service-metrics.js';

const DAY_MS = 86_400_000;
/** The expiry bands of siteplane_certificates, upper bounds in days (the last is open). */
const EXPIRY_BANDS = [
  ['0-7', 7],
  ['7-14', 14],
  ['14-30', 30],
] as const;

/**
 * The gauges the database answers, read at scrape time: three small aggregate queries (unfinished
 * jobs through the jobs_claim index; certificates are one row per subject), the same on SQLite and
 * PostgreSQL since times are ISO strings that compare as text.
 */
export async function collectDatabaseGauges(db: Kysely<Database>, clock: Clock, metrics: ServiceMetrics): Promise<void> {
  const now = clock.now();
  const nowIso = now.toISOString();
  try {
    const jobs = await db
      .selectFrom('jobs')
      .select(['kind', 'status', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('status', 'in', ['queued', 'running'])
      .groupBy(['kind', 'status'])
      .execute();
    metrics.jobs.reset();
    for (const row of jobs) metrics.jobs.set({ kind: row.kind, status: row.status }, Number(row.n));

    const oldest = await db
      .selectFrom('jobs')
      .select((eb) => eb.fn.min('run_at').as('run_at'))
      .where('status', '=', 'queued')
      .where('run_at', '<=', nowIso)
      .executeTakeFirst();
    const waitingSince = oldest?.run_at ? Date.parse(oldest.run_at) : null;
    metrics.oldestDueJobAge.set({}, waitingSince === null ? 0 : Math.max(0, (now.getTime() - waitingSince) / 1000));

    const [d7, d14, d30] = EXPIRY_BANDS.map(([, days]) => new Date(now.getTime() + days * DAY_MS).toISOString());
    const band = (above: string | null, upTo: string | null) =>
      sql<string>`SUM(CASE WHEN ${above === null ? sql`1 = 1` : sql`expires_at > ${above}`} AND ${upTo === null ? sql`1 = 1` : sql`expires_at <= ${upTo}`} THEN 1 ELSE 0 END)`;
    const certs = await db
      .selectFrom('certificates')
      .select([
        band(null, nowIso).as('expired'),
        band(nowIso, d7 as string).as('d7'),
        band(d7 as string, d14 as string).as('d14'),
        band(d14 as string, d30 as string).as('d30'),
        band(d30 as string, null).as('later'),
      ])
      .where('expires_at', 'is not', null)
      .where('material_enc', 'is not', null)
      .executeTakeFirst();
    const counts = {
      expired: certs?.expired,
      [EXPIRY_BANDS[0][0]]: certs?.d7,
      [EXPIRY_BANDS[1][0]]: certs?.d14,
      [EXPIRY_BANDS[2][0]]: certs?.d30,
      '30+': certs?.later,
    };
    // SUM over no rows is NULL: no certificate in that band.
    for (const [days, n] of Object.entries(counts)) metrics.certificates.set({ days_to_expiry: days }, Number(n ?? 0));
    metrics.databaseUp.set({}, 1);
  } catch {
    // The scrape still answers (the process's own metrics are worth having); this says why gauges are stale.
    metrics.databaseUp.set({}, 0);
  }
}
