/**
 * The certificate a site should have now: the stored one while it is valid, covers the names and
 * comes from the configured CA; otherwise a new order, made by one job at a time per subject
 * (every temporary site wants the zone certificate at once). Check before change: a resumed or
 * repeated job reuses what an earlier one got instead of ordering again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { TlsError } from '../../tls/errors.js';
import { renewalDecision } from '../../tls/renewal.js';
import { type CertificateRow, CertificateStore, type StoredCertificate } from './certificate-store.js';
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

  try {
    // Another job may have finished just before the lock was ours.
    const latest = await store.reload(row);
    if (latest.updated_at !== row.updated_at) {
      row = latest;
      const current = reusable(store, row, request, directoryUrl, deps.clock.now());
      if (current) return { certificate: current, issued: false };
    }
    const ordered = await orderCertificate(deps, request);
    const saved = await store.saveIssued(row, ordered, directoryUrl, deps.clock.now());
    return { certificate: saved, issued: true };
  } catch (error) {
    const now = deps.clock.now();
    const retryAfterMs = error instanceof TlsError ? (error.details.retryAfterSeconds ?? 0) * 1000 : 0;
    const message = error instanceof Error ? error.message : String(error);
    await store.recordFailure(row, message, new Date(now.getTime() + Math.max(RENEWAL_BACKOFF_MS, retryAfterMs)), now);
    throw error;
  } finally {
    await store.unlock(row, request.holder);
  }
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
