/**
 * One provider per profile for the life of the process, so the per-profile cache (30 s answers,
 * ETags) survives from one API request to the next. A profile whose settings changed (new token,
 * other base URL or remotes) gets a new provider and so a fresh cache: answers fetched with an old
 * token are never served for a new one.
 *
 * The pool is bounded: every profile creation checks its token through here under a new id, also
 * when the check fails, so without a bound repeated failed creations would grow it without end.
 * The least recently used profile's provider is dropped first; it is rebuilt (cache empty) on use.
 */
import { createHash } from 'node:crypto';
import { createVcsProvider } from './create-vcs-provider.js';
import type { VcsProfileConfig, VcsProvider, VcsProviderOptions } from './provider.js';

export const DEFAULT_MAX_PROFILES = 1_000;

export class VcsProviderPool {
  /** Map order is use order: the first key is the least recently used. */
  private readonly providers = new Map<string, { fingerprint: string; provider: VcsProvider }>();
  private readonly maxProfiles: number;

  constructor(
    private readonly options: VcsProviderOptions = {},
    limits: { maxProfiles?: number } = {},
  ) {
    this.maxProfiles = Math.max(1, limits.maxProfiles ?? DEFAULT_MAX_PROFILES);
  }

  /** The provider of profile `profileId`, built on first use or when its settings changed. */
  get(profileId: string, config: VcsProfileConfig): VcsProvider {
    const fingerprint = fingerprintOf(config);
    const known = this.providers.get(profileId);
    this.providers.delete(profileId);
    const entry =
      known && known.fingerprint === fingerprint ? known : { fingerprint, provider: createVcsProvider(config, this.options) };
    this.providers.set(profileId, entry);
    for (const oldest of this.providers.keys()) {
      if (this.providers.size <= this.maxProfiles) break;
      this.providers.delete(oldest);
    }
    return entry.provider;
  }

  /** Drops a deleted profile's provider and cache. */
  forget(profileId: string): void {
    this.providers.delete(profileId);
  }

  get size(): number {
    return this.providers.size;
  }
}

/** A hash, so the pool's keys never hold the token itself. */
function fingerprintOf(config: VcsProfileConfig): string {
  const canonical = JSON.stringify([config.provider, config.baseUrl, config.token, config.repositories]);
  return createHash('sha256').update(canonical).digest('hex');
}
