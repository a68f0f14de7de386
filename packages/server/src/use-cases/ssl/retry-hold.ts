/**
 * Before POST /api/v1/sites/<uuid>/ssl queues an operation for a temporary name in the operator's
 * zone: when that operation would have to order and a limit holds the order back (the name's
 * failures in the last hour, the CA's Retry-After, the zone's or the team's weekly budget), the
 * request is refused with the reason and the moment it may be made again, and nothing is queued.
 * A site whose own certificate is valid and not due is let through: its operation orders nothing.
 */
import type { Kysely } from 'kysely';
import { DomainError } from '../../domain/errors.js';
import type { Database } from '../../storage/schema.js';
import { inFreeZone } from '../../tls/certificate-plan.js';
import { renewalDecision } from '../../tls/renewal.js';
import type { UseCaseDeps } from '../deps.js';
import { FreeZoneIssuances } from './free-zone-issuances.js';

export async function assertMayOrderNow(
  deps: UseCaseDeps,
  trx: Kysely<Database>,
  site: Pick<Database['sites'], 'uuid' | 'team_uuid' | 'domain' | 'free_domain'>,
  now: Date,
): Promise<void> {
  if (!deps.freeDomainDnsProfile) return;
  const zone = { zone: deps.freeDomainBase, dnsProfile: deps.freeDomainDnsProfile };
  if (!inFreeZone({ domain: site.domain, freeDomain: site.free_domain === 1 }, zone)) return;
  const own = await trx
    .selectFrom('certificates')
    .select(['domains', 'expires_at', 'material_enc'])
    .where('scope', '=', `site:${site.uuid}`)
    .executeTakeFirst();
  const names = [site.domain];
  const stored = own?.material_enc && own.expires_at ? (JSON.parse(own.domains) as string[]) : null;
  if (stored && own?.expires_at) {
    const decision = renewalDecision({ notAfter: new Date(own.expires_at), domains: stored }, { domains: names, now });
    if (!decision.due) return;
  }
  const renewal = stored !== null && stored.length === 1 && stored[0] === site.domain;
  const issuances = new FreeZoneIssuances(trx, deps.dialect, deps.freeZoneBudget);
  const hold = await issuances.hold({ zone: zone.zone, team: site.team_uuid, site: site.uuid, name: site.domain, renewal }, now);
  if (!hold) return;
  throw new DomainError(hold.kind, hold.message, {
    retryAfterSeconds: Math.max(1, Math.ceil((hold.retryAt.getTime() - now.getTime()) / 1000)),
  });
}
