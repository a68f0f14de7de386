/**
 * The certificate a site should have now: the stored one while it is valid, covers the names and
 * comes from the configured CA; otherwise a new order, made by one job at a time per subject.
 * Check before change: a resumed or repeated job reuses what an earlier one got instead of
 * ordering again. A temporary name in the operator's zone is ordered only within the zone's
 * limits (free-zone-issuances.ts); held back, or rate-limited by the CA, its order is deferred
 * and the renewal scheduler queues it again when it may go.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { CertificatePlan } from '../../tls/certificate-plan.js';
import { TlsError } from '../../tls/errors.js';
import { renewalDecision } from '../../tls/renewal.js';
import { type CertificateRow, CertificateStore, type StoredCertificate } from './certificate-store.js';
import { FreeZoneIssuances } from './free-zone-issuances.js';
import { type OrderRequest, orderCertificate } from './order-certificate.js';
import type { SslDeps } from './tls-settings.js';

/** Why the operation runs: the first certificate, a user's retry, or the scheduler's renewal. */
export type SslReason = 'issue' | 'retry' | 'renewal';

/** Long enough for DNS propagation (2 min) and the CA's validation polls (about 4 min). */
const LOCK_TTL_MS = 15 * 60_000;
const LOCK_POLL_MS = 2_000;
/** After a failed order, scheduled renewals wait this long (or the CA's Retry-After, if longer). */
export const RENEWAL_BACKOFF_MS = 6 * 3_600_000;

export interface ObtainRequest extends OrderRequest {
  reason: SslReason;
  /** Holds the subject's lock: the operation's uuid. */
  holder: string;
}

export interface Obtained {
  certificate: StoredCertificate;
  issued: boolean;
}

export async function obtainCertificate(deps: SslDeps, request: ObtainRequest): Promise<Obtained> {
  const { plan, log } = request;
  const store = new CertificateStore(deps.db, deps.secrets);
  const directoryUrl = deps.settings.directories[plan.ca];
  let row = await store.row(plan, directoryUrl, deps.clock.now());
  const waitUntil = Date.now() + LOCK_TTL_MS + LOCK_POLL_MS;
  let waiting = false;
  for (;;) {
    const current = reusable(store, row, request, directoryUrl, deps.clock.now());
    if (current) return { certificate: current, issued: false };
    if (await store.lock(row, request.holder, deps.clock.now(), LOCK_TTL_MS)) break;
    if (Date.now() > waitUntil) {
      throw new TlsError(
        'ca_unreachable',
        `Another job has been ordering the certificate for ${plan.names.join(', ')} for too long; retry later.`,
      );
    }
    if (!waiting) log(`Another job is ordering the certificate for ${plan.names.join(', ')}; waiting for it`);
    waiting = true;
    await sleep(LOCK_POLL_MS);
    row = await store.reload(row);
  }

  const issuances = new FreeZoneIssuances(deps.db, deps.dialect, deps.settings.freeZoneBudget);
  let placed: string | null = null;
  try {
    // Another job may have finished just before the lock was ours.
    const latest = await store.reload(row);
    if (latest.updated_at !== row.updated_at) {
      row = latest;
      const current = reusable(store, row, request, directoryUrl, deps.clock.now());
      if (current) return { certificate: current, issued: false };
    }
    if (plan.freeZone) {
      const renewal = isRenewal(store.stored(row)?.names ?? null, plan);
      placed = await issuances.reserve({ ...plan.freeZone, name: plan.names.join(','), renewal }, deps.clock.now());
    }
    let ordered: Awaited<ReturnType<typeof orderCertificate>>;
    try {
      ordered = await orderCertificate(deps, request);
    } catch (error) {
      deps.orderOutcome?.(error instanceof TlsError ? error.kind : 'error');
      throw error;
    }
    deps.orderOutcome?.('issued');
    const saved = await store.saveIssued(row, ordered, directoryUrl, deps.clock.now());
    if (placed) await issuances.settle(placed, 'issued', null, deps.clock.now());
    return { certificate: saved, issued: true };
  } catch (error) {
    const now = deps.clock.now();
    const retryAfterMs = error instanceof TlsError ? (error.details.retryAfterSeconds ?? 0) * 1000 : 0;
    if (placed) await issuances.settle(placed, 'failed', retryAfterMs > 0 ? new Date(now.getTime() + retryAfterMs) : null, now);
    const message = error instanceof Error ? error.message : String(error);
    const deferUntil = plan.freeZone ? deferral(error, now) : null;
    if (deferUntil) {
      await store.defer(row, message, deferUntil, now);
      request.log(`The order for ${plan.names.join(', ')} is deferred until ${deferUntil.toISOString()}`);
    } else {
      await store.recordFailure(row, message, new Date(now.getTime() + Math.max(RENEWAL_BACKOFF_MS, retryAfterMs)), now);
    }
    throw error;
  } finally {
    await store.unlock(row, request.holder);
  }
}

/** A renewal has exactly the names of the stored certificate (the CA exempts those from its weekly budget). */
function isRenewal(stored: string[] | null, plan: CertificatePlan): boolean {
  if (!stored) return false;
  return stored.length === plan.names.length && plan.names.every((name) => stored.includes(name));
}

/** When a failed order of a zone name is tried again by itself: held back by a limit, or rate-limited by the CA. */
function deferral(error: unknown, now: Date): Date | null {
  if (!(error instanceof TlsError)) return null;
  if (error.details.retryAt) return new Date(error.details.retryAt);
  if (error.kind !== 'rate_limited') return null;
  const retryAt = new Date(now.getTime() + (error.details.retryAfterSeconds ?? 3600) * 1000);
  error.details.retryAt = retryAt.toISOString();
  return retryAt;
}

/** The stored certificate when it may be deployed as it is; logs why. */
function reusable(
  store: CertificateStore,
  row: CertificateRow,
  request: ObtainRequest,
  directoryUrl: string,
  now: Date,
): StoredCertificate | null {
  const stored = store.stored(row);
  if (!stored) return null;
  const about = `${stored.names.join(', ')} (serial ${stored.serial}, valid until ${stored.expiresAt.toISOString()})`;
  if (row.directory_url !== directoryUrl) {
    request.log(`The stored certificate for ${about} is from ${row.directory_url}; ordering one from ${directoryUrl}`);
    return null;
  }
  const decision = renewalDecision({ notAfter: stored.expiresAt, domains: stored.names }, { domains: request.plan.names, now });
  if (!decision.due) {
    request.log(`Reusing the certificate for ${about}`);
    return stored;
  }
  const backoff = row.next_attempt_at ? new Date(row.next_attempt_at) : null;
  // Scheduled renewals after a failure wait for the backoff while the old certificate still
  // works; a user's retry always tries now.
  if (request.reason === 'renewal' && decision.reason === 'expiring' && backoff && backoff > now) {
    request.log(
      `Renewal of ${about} failed earlier (${row.last_error ?? 'unknown error'}); next attempt after ${backoff.toISOString()}`,
    );
    return stored;
  }
  request.log(`The certificate for ${about} is due (${decision.reason}); ordering a new one`);
  return null;
}
