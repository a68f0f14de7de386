/**
 * One provider per profile for the life of the process, so the per-profile cache (30 s answers,
 * ETags) survives from one API request to the next. A profile whose settings changed (new token,
 * other base URL or remotes) gets a new provider and so a fresh cache: answers fetched with an old
 * token are never served for a new one.
 */
import { createHash } from 'node:crypto';
import { createVcsProvider } from './create-vcs-provider.js';
import type { VcsProfileConfig, VcsProvider, VcsProviderOptions } from './provider.js';

export class VcsProviderPool {
  private readonly providers = new Map<string, { fingerprint: string; provider: VcsProvider }>();

  constructor(private readonly options: VcsProviderOptions = {}) {}

  /** The provider of profile `profileId`, built on first use or when its settings changed. */
  get(profileId: string, config: VcsProfileConfig): VcsProvider {
    const fingerprint = fingerprintOf(config);
    const known = this.providers.get(profileId);
    if (known && known.fingerprint === fingerprint) return known.provider;
    const provider = createVcsProvider(config, this.options);
    this.providers.set(profileId, { fingerprint, provider });
    return provider;
  }

  /** Drops a deleted profile's provider and cache. */
  forget(profileId: string): void {
    this.providers.delete(profileId);
  }
}

/** A hash, so the pool's keys never hold the token itself. */
function fingerprintOf(config: VcsProfileConfig): string {
  const canonical = JSON.stringify([config.provider, config.baseUrl, config.token, config.repositories]);
  return createHash('sha256').update(canonical).digest('hex');
}
