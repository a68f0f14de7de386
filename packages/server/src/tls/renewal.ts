/**
 * When a certificate is due for renewal, and what a stored certificate covers. Pure apart from
 * parsing; the clock is always passed in so the rules can be tested at any moment.
 *
 * 30 days before expiry is what Let's Encrypt recommends for its 90-day certificates: it leaves
 * several weeks of daily retries if the CA or the site's DNS has a bad day.
 */
import { X509Certificate } from 'node:crypto';

export const RENEW_BEFORE_DAYS = 30;
const DAY_MS = 86_400_000;

export interface CertificateFacts {
  notBefore: Date;
  notAfter: Date;
  /** DNS names of the subject alternative names, lower-case, in certificate order. */
  domains: string[];
  /** Serial number as upper-case hex, as OpenSSL prints it. */
  serialNumber: string;
  issuer: string;
}

/** The first certificate of a PEM bundle (the leaf of a full chain). */
export function parseCertificate(pem: string): CertificateFacts {
  const cert = new X509Certificate(pem);
  return {
    notBefore: new Date(cert.validFrom),
    notAfter: new Date(cert.validTo),
    domains: subjectAltDnsNames(cert.subjectAltName),
    serialNumber: cert.serialNumber.toUpperCase(),
    issuer: cert.issuer,
  };
}

/**
 * `DNS:a.example, DNS:*.example, IP Address:1.2.3.4` → the DNS entries. Node writes an entry
 * holding a comma or quote as a JSON string (`DNS:"a,b"`); host names never do, but a crafted
 * certificate could, so entries are split with quotes respected.
 */
function subjectAltDnsNames(san: string | undefined): string[] {
  if (!san) return [];
  const entries: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < san.length; i++) {
    const ch = san[i] as string;
    if (quoted && ch === '\\') {
      current += ch + (san[++i] ?? '');
      continue;
    }
    if (ch === '"') quoted = !quoted;
    if (ch === ',' && !quoted) {
      entries.push(current.trim());
      current = '';
      continue;
    }
    current += ch;
  }
  entries.push(current.trim());
  return entries
    .filter((entry) => entry.startsWith('DNS:'))
    .map((entry) => entry.slice(4))
    .map((value) => (value.startsWith('"') ? (JSON.parse(value) as string) : value).toLowerCase());
}

export interface RenewalPolicy {
  renewBeforeDays?: number;
}

/** The moment from which a certificate expiring at `notAfter` should be renewed. */
export function renewalDueAt(notAfter: Date, policy: RenewalPolicy = {}): Date {
  return new Date(notAfter.getTime() - (policy.renewBeforeDays ?? RENEW_BEFORE_DAYS) * DAY_MS);
}

export function isRenewalDue(notAfter: Date, now: Date, policy: RenewalPolicy = {}): boolean {
  return now.getTime() >= renewalDueAt(notAfter, policy).getTime();
}

export type RenewalReason = 'expiring' | 'expired' | 'names_changed';

export interface RenewalDecision {
  due: boolean;
  reason?: RenewalReason;
  /** When it becomes due (now, if it already is). */
  dueAt: Date;
}

/**
 * Whether a stored certificate must be replaced: it expires within the window, has expired, or no
 * longer covers the names the site wants (a `www.` or wildcard added later).
 */
export function renewalDecision(
  certificate: { notAfter: Date; domains: readonly string[] },
  wanted: { domains: readonly string[]; now: Date },
  policy: RenewalPolicy = {},
): RenewalDecision {
  const { now } = wanted;
  const have = new Set(certificate.domains.map((d) => d.toLowerCase()));
  if (wanted.domains.some((d) => !have.has(d.toLowerCase()))) return { due: true, reason: 'names_changed', dueAt: now };
  if (now.getTime() >= certificate.notAfter.getTime()) return { due: true, reason: 'expired', dueAt: now };
  const dueAt = renewalDueAt(certificate.notAfter, policy);
  return now.getTime() >= dueAt.getTime() ? { due: true, reason: 'expiring', dueAt: now } : { due: false, dueAt };
}
