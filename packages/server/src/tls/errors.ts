/**
 * What can go wrong while getting a certificate, as kinds the caller can act on: tell the user to
 * fix DNS, retry later (rate limit, CA down), or fix credentials. Messages name the domain and are
 * safe to show to the user (no keys, no HMAC, no tokens).
 */
import type { HoldKind } from './issuance-limits.js';

export type TlsErrorKind =
  | 'dns_not_pointing'
  | 'challenge_failed'
  | 'rate_limited'
  | 'ca_unreachable'
  | 'account_failed'
  | 'dns_provider_failed'
  // Held back before the CA is asked, by the limits of temporary names in the operator's zone
  // (tls/issuance-limits.ts); retried by the renewal scheduler at `retryAt`.
  | HoldKind;

export interface TlsErrorDetails {
  /** The name the failure is about (`*.example.com`, `www.example.com`), when there is one. */
  domain?: string;
  /** The CA's problem type (`urn:ietf:params:acme:error:rateLimited`), when it sent one. */
  acmeProblem?: string;
  /** From the CA's Retry-After header, for rate limits. */
  retryAfterSeconds?: number;
  /** When the order may be placed again (a limit was reached), as an ISO time. */
  retryAt?: string;
  /** Challenge records or tokens that could not be removed afterwards, to show or retry. */
  leftovers?: string[];
}

export class TlsError extends Error {
  constructor(
    readonly kind: TlsErrorKind,
    message: string,
    readonly details: TlsErrorDetails = {},
  ) {
    super(message);
    this.name = 'TlsError';
  }
}
