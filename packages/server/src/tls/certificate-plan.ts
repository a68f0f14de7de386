/**
 * Which certificate a site gets, from whom, and how it is proven. Pure, so every case is unit-tested.
 *
 * - A custom domain: `domain`, HTTP-01 through the site's nginx, the team's account with its CA.
 * - A wildcard site: `*.domain`, `domain` (and `www.domain` with includeWww), all DNS-01 through
 *   the site's DNS profile, so the domain need not point at the server yet.
 * - A temporary domain in the operator's zone: its own name and nothing else, DNS-01 through
 *   FREE_DOMAIN_DNS_PROFILE, the operator's own account. Never a wildcard of the zone: its key
 *   would sit on every tenant's server, and root on any of them could serve every other tenant's
 *   temporary names. DNS-01 rather than HTTP-01: Siteplane creates the name's A record itself, and
 *   the proof needs neither that record to have spread nor port 80 of the server open. Each such
 *   certificate spends the zone's budget at the CA (tls/issuance-limits.ts).
 * - A temporary domain under an IP-embedding base (sslip.io): its own name, HTTP-01.
 */
import { type ChallengeType, siteCertificateNames } from './certificate-names.js';

export type CertificateAuthority = 'letsencrypt' | 'zerossl';

/** The owner of the ACME account that orders temporary names in the operator's zone (not a team). */
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
  /**
   * Storage key: `site:<uuid>`. (`zone:<zone>` rows are the zone wildcard that temporary sites
   * shared before; no plan names them any more, and they go once no site has them deployed.)
   */
  scope: string;
  /** Team uuid, or OPERATOR_OWNER for a temporary name in the operator's zone. */
  owner: string;
  ca: CertificateAuthority;
  names: string[];
  challenge: ChallengeType;
  /** DNS profile for DNS-01; null for HTTP-01. */
  dnsProfile: string | null;
  email: string | null;
  /** A temporary name in the operator's zone: whose order spends the zone's budget. */
  freeZone: FreeZoneOrder | null;
}

export interface FreeZoneOrder {
  zone: string;
  team: string;
  site: string;
}

/** The zone a temporary domain was generated in, when it is the configured owned zone. */
export function inFreeZone(site: Pick<SiteForCertificate, 'domain' | 'freeDomain'>, zone: FreeDomainZone | null): boolean {
  return site.freeDomain && zone !== null && site.domain.endsWith(`.${zone.zone}`);
}

export function planCertificate(site: SiteForCertificate, zone: FreeDomainZone | null): CertificatePlan {
  const scope = `site:${site.uuid}`;
  if (zone && inFreeZone(site, zone)) {
    return {
      scope,
      owner: OPERATOR_OWNER,
      ca: 'letsencrypt',
      names: siteCertificateNames(site.domain),
      challenge: 'dns-01',
      dnsProfile: zone.dnsProfile,
      email: null,
      freeZone: { zone: zone.zone, team: site.teamUuid, site: site.uuid },
    };
  }
  const ca: CertificateAuthority = site.ssl.provider === 'zerossl' ? 'zerossl' : 'letsencrypt';
  const own = { scope, owner: site.teamUuid, ca, email: site.ssl.email, freeZone: null };
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
