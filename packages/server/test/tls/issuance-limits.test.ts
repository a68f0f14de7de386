// Issue 10 items 5 and 11: when an order for a temporary name in the operator's zone may go. Pure.
import { describe, expect, it } from 'vitest';
import { freeingOffset, HOUR_MS, type IssuanceHistory, issuanceHold, WEEK_MS } from '../../src/tls/issuance-limits.js';

const now = new Date('2026-11-26T12:00:00Z');
const ago = (ms: number) => new Date(now.getTime() - ms);
const none = { count: 0, freedAt: null };
const quiet: IssuanceHistory = { nameFailures: none, nameRetryAfter: null, zoneNew: none, teamNew: none, zoneOrders: none };
const budget = { perWeek: 50, perTeamPerWeek: 10 };
const order = { zone: 'apps.example.net', name: 'abc.apps.example.net', renewal: false };

describe('issuanceHold', () => {
  it('lets an order go while every count is below its limit', () => {
    expect(issuanceHold(quiet, budget, order, now)).toBeNull();
    const busy = { ...quiet, zoneNew: { count: 49, freedAt: null }, teamNew: { count: 9, freedAt: null } };
    expect(issuanceHold(busy, budget, order, now)).toBeNull();
  });

  it('the zone budget spent: waits until the oldest counted certificate is a week old', () => {
    const hold = issuanceHold({ ...quiet, zoneNew: { count: 50, freedAt: ago(2 * HOUR_MS) } }, budget, order, now);
    expect(hold).toMatchObject({ kind: 'zone_certificates_exhausted', retryAt: new Date(now.getTime() - 2 * HOUR_MS + WEEK_MS) });
    expect(hold?.message).toContain('FREE_DOMAIN_CERTIFICATES_PER_WEEK = 50');
  });

  it('the team share spent: held back while the zone has room', () => {
    const hold = issuanceHold({ ...quiet, teamNew: { count: 10, freedAt: ago(HOUR_MS) } }, budget, order, now);
    expect(hold).toMatchObject({ kind: 'team_certificates_exhausted', retryAt: new Date(now.getTime() - HOUR_MS + WEEK_MS) });
    expect(hold?.message).toContain('FREE_DOMAIN_TEAM_CERTIFICATES_PER_WEEK = 10');
  });

  it('0 means no limit; renewals are exempt from both weekly budgets', () => {
    const spent = { ...quiet, zoneNew: { count: 500, freedAt: ago(HOUR_MS) }, teamNew: { count: 500, freedAt: ago(HOUR_MS) } };
    expect(issuanceHold(spent, { perWeek: 0, perTeamPerWeek: 0 }, order, now)).toBeNull();
    expect(issuanceHold(spent, budget, { ...order, renewal: true }, now)).toBeNull();
  });

  it('5 failed orders of the name in the hour: not again until the oldest of them is an hour old; a renewal too', () => {
    const failures = { count: 5, freedAt: ago(10 * 60_000) };
    const hold = issuanceHold({ ...quiet, nameFailures: failures }, budget, { ...order, renewal: true }, now);
    expect(hold).toMatchObject({ kind: 'certificate_retry_limited', retryAt: new Date(now.getTime() + 50 * 60_000) });
    expect(issuanceHold({ ...quiet, nameFailures: { count: 4, freedAt: null } }, budget, order, now)).toBeNull();
  });

  it("the CA's Retry-After for the name holds it back until then", () => {
    const later = new Date(now.getTime() + 30 * 60_000);
    expect(issuanceHold({ ...quiet, nameRetryAfter: later }, budget, order, now)).toMatchObject({
      kind: 'certificate_retry_limited',
      retryAt: later,
    });
    expect(issuanceHold({ ...quiet, nameRetryAfter: ago(1) }, budget, order, now)).toBeNull();
  });

  it('300 orders of the operator account in 3 hours hold every name back, renewals included', () => {
    const hold = issuanceHold(
      { ...quiet, zoneOrders: { count: 300, freedAt: ago(HOUR_MS) } },
      budget,
      { ...order, renewal: true },
      now,
    );
    expect(hold).toMatchObject({ kind: 'zone_certificates_exhausted', retryAt: new Date(now.getTime() + 2 * HOUR_MS) });
  });

  it('several limits reached: the latest moment wins', () => {
    const hold = issuanceHold(
      { ...quiet, nameFailures: { count: 5, freedAt: ago(0) }, teamNew: { count: 10, freedAt: ago(0) } },
      budget,
      order,
      now,
    );
    expect(hold?.kind).toBe('team_certificates_exhausted');
  });

  it('freeingOffset: the entry whose leaving brings the count below the limit', () => {
    expect(freeingOffset(4, 5)).toBeNull();
    expect(freeingOffset(5, 5)).toBe(0);
    expect(freeingOffset(7, 5)).toBe(2);
    expect(freeingOffset(7, 0)).toBeNull();
  });
});
