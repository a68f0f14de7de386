/**
 * The orders placed for temporary names in the operator's zone (`free_domain_issuances`), read to
 * decide whether the next one may go (tls/issuance-limits.ts) and written when one is placed.
 *
 * Checking and recording happen in one transaction under a lock per zone (an advisory lock on
 * PostgreSQL, where several workers may order at once; SQLite runs one write transaction at a
 * time), so two orders cannot both take the budget's last place. An order is recorded before it
 * is placed and counted as issued until it is known to have failed: a job that dies half-way
 * never gives back a certificate the CA may have issued. Rows outlive their site (deleting and
 * re-creating a site must not refill the budget) and are pruned after 8 days.
 */
import { randomUUID } from 'node:crypto';
import { type Kysely, type SelectQueryBuilder, sql } from 'kysely';
import type { Dialect } from '../../storage/database.js';
import type { Database } from '../../storage/schema.js';
import type { FreeZoneOrder } from '../../tls/certificate-plan.js';
import { TlsError } from '../../tls/errors.js';
import {
  FAILED_ORDERS_PER_NAME_PER_HOUR,
  freeingOffset,
  HOUR_MS,
  type Hold,
  type IssuanceBudget,
  type IssuanceHistory,
  issuanceHold,
  ORDERS_PER_ACCOUNT_PER_3_HOURS,
  WEEK_MS,
  type WindowCount,
} from '../../tls/issuance-limits.js';

export interface FreeZoneSubject extends FreeZoneOrder {
  name: string;
  /** The name had a certificate: exempt from the weekly budgets. */
  renewal: boolean;
}

const KEEP_MS = WEEK_MS + 24 * HOUR_MS;

export class FreeZoneIssuances {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly budget: IssuanceBudget,
  ) {}

  /** Why an order for the subject must wait now, or null (reads only: the retry endpoint asks). */
  async hold(subject: FreeZoneSubject, now: Date): Promise<Hold | null> {
    return issuanceHold(await history(this.db, subject, this.budget, now), this.budget, subject, now);
  }

  /**
   * Records an order about to be placed and returns its id; throws a TlsError of the hold's kind
   * (with `retryAt`) when a limit says it must wait, and records nothing then.
   */
  async reserve(subject: FreeZoneSubject, now: Date): Promise<string> {
    return this.db.transaction().execute(async (trx) => {
      if (this.dialect === 'postgres') {
        await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`siteplane:free-zone:${subject.zone}`}, 0))`.execute(trx);
      }
      await trx
        .deleteFrom('free_domain_issuances')
        .where('created_at', '<', new Date(now.getTime() - KEEP_MS).toISOString())
        .execute();
      const held = issuanceHold(await history(trx, subject, this.budget, now), this.budget, subject, now);
      if (held) {
        const meanwhile = 'until then the site is served as it is now (over HTTP if it has no certificate yet)';
        throw new TlsError(held.kind, `${held.message} Siteplane orders it by itself then; ${meanwhile}.`, {
          domain: subject.name,
          retryAt: held.retryAt.toISOString(),
          retryAfterSeconds: Math.max(1, Math.ceil((held.retryAt.getTime() - now.getTime()) / 1000)),
        });
      }
      const uuid = randomUUID();
      await trx
        .insertInto('free_domain_issuances')
        .values({
          uuid,
          zone: subject.zone,
          name: subject.name,
          team_uuid: subject.team,
          site_uuid: subject.site,
          renewal: subject.renewal ? 1 : 0,
          outcome: 'ordering',
          retry_after: null,
          created_at: now.toISOString(),
          updated_at: now.toISOString(),
        })
        .execute();
      return uuid;
    });
  }

  /** The order's outcome; a failure frees its place in the weekly budgets and counts for the name. */
  async settle(uuid: string, outcome: 'issued' | 'failed', retryAfter: Date | null, now: Date): Promise<void> {
    await this.db
      .updateTable('free_domain_issuances')
      .set({ outcome, retry_after: retryAfter?.toISOString() ?? null, updated_at: now.toISOString() })
      .where('uuid', '=', uuid)
      .execute();
  }
}

async function history(
  db: Kysely<Database>,
  subject: FreeZoneSubject,
  budget: IssuanceBudget,
  now: Date,
): Promise<IssuanceHistory> {
  const since = (ms: number) => new Date(now.getTime() - ms).toISOString();
  const none: WindowCount = { count: 0, freedAt: null };
  const base = db.selectFrom('free_domain_issuances');
  const nameFailures = await windowCount(
    base.where('name', '=', subject.name).where('outcome', '=', 'failed').where('created_at', '>=', since(HOUR_MS)),
    FAILED_ORDERS_PER_NAME_PER_HOUR,
  );
  const retryAfter = await base
    .select((eb) => eb.fn.max('retry_after').as('at'))
    .where('name', '=', subject.name)
    .where('retry_after', '>', now.toISOString())
    .executeTakeFirst();
  const zoneOrders = await windowCount(
    base.where('zone', '=', subject.zone).where('created_at', '>=', since(3 * HOUR_MS)),
    ORDERS_PER_ACCOUNT_PER_3_HOURS,
  );
  const newThisWeek = base
    .where('zone', '=', subject.zone)
    .where('renewal', '=', 0)
    .where('outcome', '!=', 'failed')
    .where('created_at', '>=', since(WEEK_MS));
  const check = !subject.renewal;
  return {
    nameFailures,
    nameRetryAfter: retryAfter?.at ? new Date(retryAfter.at) : null,
    zoneOrders,
    zoneNew: check && budget.perWeek > 0 ? await windowCount(newThisWeek, budget.perWeek) : none,
    teamNew:
      check && budget.perTeamPerWeek > 0
        ? await windowCount(newThisWeek.where('team_uuid', '=', subject.team), budget.perTeamPerWeek)
        : none,
  };
}

/** How many rows the query finds, and (at or over `limit`) the time of the one whose leaving frees a place. */
async function windowCount(
  // biome-ignore lint/complexity/noBannedTypes: Kysely's type of a query that selects nothing yet
  query: SelectQueryBuilder<Database, 'free_domain_issuances', {}>,
  limit: number,
): Promise<WindowCount> {
  const row = await query.select((eb) => eb.fn.countAll<string | number>().as('n')).executeTakeFirstOrThrow();
  const count = Number(row.n);
  const offset = freeingOffset(count, limit);
  if (offset === null) return { count, freedAt: null };
  const at = await query.select('created_at').orderBy('created_at').limit(1).offset(offset).executeTakeFirst();
  return { count, freedAt: at ? new Date(at.created_at) : null };
}
