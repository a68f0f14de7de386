import type { EgressPolicy } from '../../egress/egress-policy.js';
import { guardedFetch } from '../../egress/guarded-fetch.js';

/** One guarded fetch per egress policy: its keep-alive agents are reused from one write to the next. */
const fetches = new WeakMap<EgressPolicy, typeof fetch>();

/**
 * The fetch for Siteplane's writes at a provider (webhooks, deploy keys): a profile's baseUrl is a
 * tenant's choice, so every request goes through the egress policy like every other call to it.
 */
export function providerFetch(egress: EgressPolicy): typeof fetch {
  const existing = fetches.get(egress);
  if (existing) return existing;
  const made = guardedFetch(egress);
  fetches.set(egress, made);
  return made;
}
