/**
 * When an order for a temporary name in the operator's zone may be placed. Pure: the history is
 * read by use-cases/ssl/free-zone-issuances.ts, the clock is passed in.
 *
 * Every such name gets its own certificate, and all of them fall under one registered domain at
 * the CA, whose budget every tenant shares (Let's Encrypt: 50 new certificates a week). So:
 * - the zone spends at most `perWeek` new certificates in any 7 days, and one team at most
 *   `perTeamPerWeek` of them, so one tenant's mass creates cannot leave the others none;
 *   renewals (the name had a certificate) are exempt, as they are at Let's Encrypt;
 * - a name whose orders failed 5 times in the last hour is not ordered again until the oldest of
 *   those leaves the hour (the CA's failed-validation limit), nor before the CA's Retry-After;
 * - the operator's account places at most 300 orders in any 3 hours (the CA's new-orders limit).
 * Windows slide: the next order may be placed when the oldest counted one leaves its window.
 */

export const FAILED_ORDERS_PER_NAME_PER_HOUR = 5;
export const ORDERS_PER_ACCOUNT_PER_3_HOURS = 300;
export const HOUR_MS = 3_600_000;
export const WEEK_MS = 7 * 24 * HOUR_MS;

/** FREE_DOMAIN_CERTIFICATES_PER_WEEK, FREE_DOMAIN_TEAM_CERTIFICATES_PER_WEEK; 0 means no limit. */
export interface IssuanceBudget {
  perWeek: number;
  perTeamPerWeek: number;
}

/** Stable codes (ssl.error.code, and the problem code of POST /api/v1/sites/<uuid>/ssl). */
export type HoldKind = 'certificate_retry_limited' | 'zone_certificates_exhausted' | 'team_certificates_exhausted';

/** A count within a window, with the moment the count drops below a limit (when it is at or over it). */
export interface WindowCount {
  count: number;
  /** created_at of the counted entry whose leaving the window frees a place: the (count − limit + 1)-th oldest. */
  freedAt: Date | null;
}

export interface IssuanceHistory {
  /** The name's failed orders in the last hour. */
  nameFailures: WindowCount;
  /** The latest Retry-After the CA gave for this name, when it is still ahead. */
  nameRetryAfter: Date | null;
  /** New (not renewal) orders of the zone in the last 7 days that did not fail. */
  zoneNew: WindowCount;
  /** The same, of the team. */
  teamNew: WindowCount;
  /** Every order of the zone (the operator's account) in the last 3 hours. */
  zoneOrders: WindowCount;
}

export interface Hold {
  kind: HoldKind;
  retryAt: Date;
  message: string;
}

export interface OrderAbout {
  zone: string;
  name: string;
  renewal: boolean;
}

/**
 * The offset of the entry whose leaving the window brings `count` below `limit` (entries sorted
 * oldest first); null when it is below already. The history query reads that entry's time.
 */
export function freeingOffset(count: number, limit: number): number | null {
  return limit > 0 && count >= limit ? count - limit : null;
}

/** Why the order must wait, and until when (the latest of every limit reached); null when it may go. */
export function issuanceHold(history: IssuanceHistory, budget: IssuanceBudget, order: OrderAbout, now: Date): Hold | null {
  const holds: Hold[] = [];
  const at = (from: Date | null, windowMs: number) => new Date((from ?? now).getTime() + windowMs);
  const { nameFailures, nameRetryAfter, zoneNew, teamNew, zoneOrders } = history;
  if (nameFailures.count >= FAILED_ORDERS_PER_NAME_PER_HOUR) {
    const retryAt = at(nameFailures.freedAt, HOUR_MS);
    holds.push({
      kind: 'certificate_retry_limited',
      retryAt,
      message: `Orders for ${order.name} failed ${nameFailures.count} times in the last hour (the CA allows ${FAILED_ORDERS_PER_NAME_PER_HOUR} failed validations per name and hour); it may be ordered again after ${retryAt.toISOString()}.`,
    });
  }
  if (nameRetryAfter && nameRetryAfter > now) {
    holds.push({
      kind: 'certificate_retry_limited',
      retryAt: nameRetryAfter,
      message: `The CA asked to wait before ${order.name} is ordered again; it may be ordered after ${nameRetryAfter.toISOString()}.`,
    });
  }
  if (zoneOrders.count >= ORDERS_PER_ACCOUNT_PER_3_HOURS) {
    const retryAt = at(zoneOrders.freedAt, 3 * HOUR_MS);
    holds.push({
      kind: 'zone_certificates_exhausted',
      retryAt,
      message: `${zoneOrders.count} certificates were ordered for temporary names in ${order.zone} in the last 3 hours (the CA allows ${ORDERS_PER_ACCOUNT_PER_3_HOURS} orders per account); the next may be ordered after ${retryAt.toISOString()}.`,
    });
  }
  if (!order.renewal && budget.perWeek > 0 && zoneNew.count >= budget.perWeek) {
    const retryAt = at(zoneNew.freedAt, WEEK_MS);
    holds.push({
      kind: 'zone_certificates_exhausted',
      retryAt,
      message: `${zoneNew.count} new certificates were issued for temporary names in ${order.zone} in the last 7 days, its weekly budget (FREE_DOMAIN_CERTIFICATES_PER_WEEK = ${budget.perWeek}); the next may be ordered after ${retryAt.toISOString()}.`,
    });
  }
  if (!order.renewal && budget.perTeamPerWeek > 0 && teamNew.count >= budget.perTeamPerWeek) {
    const retryAt = at(teamNew.freedAt, WEEK_MS);
    holds.push({
      kind: 'team_certificates_exhausted',
      retryAt,
      message: `The team got ${teamNew.count} new certificates for temporary names in ${order.zone} in the last 7 days, its share of the zone's budget (FREE_DOMAIN_TEAM_CERTIFICATES_PER_WEEK = ${budget.perTeamPerWeek}); the next may be ordered after ${retryAt.toISOString()}.`,
    });
  }
  if (holds.length === 0) return null;
  return holds.reduce((a, b) => (b.retryAt > a.retryAt ? b : a));
}
