/**
 * DNS-01 through a stored DNS profile: TXT records are created and removed with the profile's
 * provider (dns/), and the issuer waits until the configured resolvers see them.
 */
import type { DnsProvider, DnsRecordRef } from '../dns/provider.js';
import type { Dns01Hooks } from './challenge-hooks.js';
import { type TxtVisibilityOptions, waitForTxt } from './txt-visibility.js';

/** Short TTL: the record lives for minutes, and a cached stale value would fail a renewal. */
const CHALLENGE_TTL_SECONDS = 60;

export function dns01HooksFor(provider: DnsProvider, visibility: TxtVisibilityOptions = {}): Dns01Hooks<DnsRecordRef> {
  return {
    setTxt: (fqdn, value) => provider.createRecord({ name: fqdn, type: 'TXT', value, ttl: CHALLENGE_TTL_SECONDS }),
    removeTxt: (ref) => provider.deleteRecord(ref),
    waitVisible: (fqdn, value) => waitForTxt(fqdn, value, visibility),
  };
}
