/**
 * Which names a certificate covers and how each is proven. Pure.
 *
 * A wildcard can only be proven with DNS-01 (RFC 8555 §7.1.3), so `*.example.com` always uses it;
 * the other names use the challenge the site asked for.
 */
import { hostnameProblem, normaliseHostname } from '../domain/hostnames.js';

export type ChallengeType = 'http-01' | 'dns-01';

export interface PlannedName {
  /** As it appears in the certificate: `*.example.com`, `example.com`. */
  name: string;
  challenge: ChallengeType;
}

/** The names of a site's certificate: the domain, its wildcard, and `www.` when asked. */
export function siteCertificateNames(domain: string, options: { wildcard?: boolean; includeWww?: boolean } = {}): string[] {
  const base = normaliseHostname(domain);
  const names = options.wildcard ? [`*.${base}`, base] : [base];
  // `*.example.com` already covers www; it is still listed when asked so the certificate names it
  // explicitly, as the site's settings say.
  if (options.includeWww && !base.startsWith('www.')) names.push(`www.${base}`);
  return names;
}

/** Lower-cases, drops duplicates and checks every name; throws on one a CA would refuse. */
export function normaliseCertificateNames(domains: readonly string[]): string[] {
  const names: string[] = [];
  for (const raw of domains) {
    const name = normaliseHostname(raw);
    const wildcard = name.startsWith('*.');
    const host = wildcard ? name.slice(2) : name;
    const problem = host.includes('*') ? 'a wildcard may only be the whole first label' : hostnameProblem(host);
    if (problem) throw new TypeError(`Certificate name "${raw}" ${problem}.`);
    if (!names.includes(name)) names.push(name);
  }
  if (names.length === 0) throw new TypeError('A certificate needs at least one name.');
  if (names.length > 100) throw new TypeError('A certificate can cover at most 100 names.');
  return names;
}

export function planChallenges(names: readonly string[], preferred: ChallengeType): PlannedName[] {
  return names.map((name) => ({ name, challenge: name.startsWith('*.') ? 'dns-01' : preferred }));
}

/** The certificate name an ACME authorization is for (the CA strips `*.` and sets `wildcard`). */
export function authorizationName(authz: { identifier: { value: string }; wildcard?: boolean }): string {
  const value = authz.identifier.value.toLowerCase();
  return authz.wildcard ? `*.${value}` : value;
}

/** Where the DNS-01 TXT record for a name lives; `*.example.com` and `example.com` share one. */
export function dns01RecordName(name: string): string {
  return `_acme-challenge.${name.startsWith('*.') ? name.slice(2) : name}`;
}
