/**
 * Which certificate a site gets, from whom, and how it is proven. Pure, so every case is unit-tested.
 *
 * - A custom domain: `domain`, HTTP-01 through the site's nginx, the team's account with its CA.
 * - A wildcard site: `*.domain`, `domain` (and `www.domain` with includeWww), all DNS-01 through
 *   the site's DNS profile, so the domain need not point at the server yet.
 * - A temporary domain in the operator's zone: the zone's one wildcard `*.zone`, shared by every
 *   temporary site (one order per renewal instead of one per site: CA rate limits are never
 *   reached), DNS-01 through FREE_DOMAIN_DNS_PROFILE, the operator's own account.
 * - A temporary domain under an IP-embedding base (sslip.io): its own name, HTTP-01.
 */
import { type ChallengeType, siteCertificateNames } from './certificate-names.js';

export type CertificateAuthority = 'letsencrypt' | 'zerossl';

/** The owner of the operator's zone certificate and its ACME account (not a team). */
export const OPERATOR_OWNER = 'siteplane';

export interface SiteForCertificate {
  uuid: string;
  teamUuid: string;
  domain: string;
  freeDomain: boolean;
  ssl: {
    provider: string | null;
    email: string | null;
    wildcard: boolean;
    includeWww: boolean;
    dnsProfile: { uuid: string; provider: string } | null;
  };
}

export interface FreeDomainZone {
  zone: string;
  /** UUID of the DNS profile that manages the zone. */
  dnsProfile: string;
}

export interface CertificatePlan {
  /** Storage key: `site:<uuid>` for a site's own certificate, `zone:<zone>` for the shared one. */
  scope: string;
  /** Team uuid, or OPERATOR_OWNER for the zone certificate. */
  owner: string;
  ca: CertificateAuthority;
  names: string[];
  challenge: ChallengeType;
  /** DNS profile for DNS-01; null for HTTP-01. */
  dnsProfile: string | null;
  email: string | null;
  /** True for the zone certificate shared by temporary sites. */
  shared: boolean;
}

/** The zone a temporary domain was generated in, when it is the configured owned zone. */
export function inFreeZone(site: Pick<SiteForCertificate, 'domain' | 'freeDomain'>, zone: FreeDomainZone | null): boolean {
  return site.freeDomain && zone !== null && site.domain.endsWith(`.${zone.zone}`);
}

export function planCertificate(site: SiteForCertificate, zone: FreeDomainZone | null): CertificatePlan {
  if (zone && inFreeZone(site, zone)) {
    return {
      scope: `zone:${zone.zone}`,
      owner: OPERATOR_OWNER,
      ca: 'letsencrypt',
      names: [`*.${zone.zone}`],
      challenge: 'dns-01',
      dnsProfile: zone.dnsProfile,
      email: null,
      shared: true,
    };
  }
  const ca: CertificateAuthority = site.ssl.provider === 'zerossl' ? 'zerossl' : 'letsencrypt';
  const own = { scope: `site:${site.uuid}`, owner: site.teamUuid, ca, email: site.ssl.email, shared: false };
  if (site.ssl.wildcard && site.ssl.dnsProfile) {
    return {
      ...own,
      names: siteCertificateNames(site.domain, { wildcard: true, includeWww: site.ssl.includeWww }),
      challenge: 'dns-01',
      dnsProfile: site.ssl.dnsProfile.uuid,
    };
  }
  return { ...own, names: siteCertificateNames(site.domain), challenge: 'http-01', dnsProfile: null };
}
