/**
 * Plain git remotes: the profile lists remote URLs, each is a repository named after the last two
 * segments of its path. There is no account and no API; default branch and branches come from
 * `git ls-remote`, remembered per URL for the cache TTL so a list followed by a detail asks once.
 */

import { DEFAULT_GIT_TIMEOUT_MS, type LsRemoteResult, lsRemote } from './git-ls-remote.js';
import { type GitRemote, parseGitRemote } from './git-remote.js';
import { TtlMemo } from './http-cache.js';
import {
  type RepositoryDetail,
  type RepositorySummary,
  VcsError,
  type VcsProfileConfig,
  type VcsProvider,
  type VcsProviderOptions,
  VcsRemotesError,
} from './provider.js';
import { stripUrlCredentials } from './redact.js';

/** Remotes asked at once; each is a git process and a connection. */
const CONCURRENCY = 4;

export class GitProvider implements VcsProvider {
  private readonly remotes: GitRemote[];
  private readonly memo: TtlMemo<LsRemoteResult>;
  private readonly inFlight = new Map<string, Promise<LsRemoteResult>>();
  private readonly timeoutMs: number;
  private readonly checkHost: VcsProviderOptions['checkHost'];

  constructor(config: VcsProfileConfig, options: VcsProviderOptions = {}) {
    this.remotes = config.repositories.map((url) => {
      const remote = parseGitRemote(url);
      if (!remote)
        throw new VcsError(
          'provider_error',
          `not a supported git remote URL: ${JSON.stringify(stripUrlCredentials(url).slice(0, 200))}`,
        );
      return remote;
    });
    this.memo = new TtlMemo({ now: options.now, ttlMs: options.cacheTtlMs });
    this.timeoutMs = options.timeoutMs ?? DEFAULT_GIT_TIMEOUT_MS;
    this.checkHost = options.checkHost;
  }

  /**
   * No account behind plain git; checks instead that every remote answers now. Every remote is
   * asked, and each failure names its remote's index, so a profile with two bad URLs hears of both.
   */
  async whoami(): Promise<{ account: string | null }> {
    const outcomes = await eachLimited(
      this.remotes.map((remote, index) => ({ remote, index })),
      ({ remote, index }) =>
        this.refs(remote, true).then(
          () => null,
          (error: unknown) => (wantsDeployKey(remote, error) ? null : atRemote(error, index)),
        ),
    );
    const failures = outcomes.filter((outcome): outcome is VcsError => outcome !== null);
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new VcsRemotesError(failures);
    return { account: null };
  }

  /** A remote that admits deploy keys only is listed with no default branch (it is read with a site's key). */
  async listRepositories(): Promise<RepositorySummary[]> {
    return eachLimited(this.remotes, async (remote) => {
      try {
        return summary(remote, await this.refs(remote, false));
      } catch (error) {
        if (wantsDeployKey(remote, error)) return summary(remote, { head: null, branches: [] });
        throw error;
      }
    });
  }

  async getRepository(name: string, access: { sshPrivateKey?: string } = {}): Promise<RepositoryDetail> {
    // Two remotes with the same name: the first listed wins (profile creation should refuse such lists).
    const remote = this.remotes.find((candidate) => candidate.name === name);
    if (!remote)
      throw new VcsError('not_found', `this git profile lists no repository named ${JSON.stringify(name.slice(0, 200))}`);
    // Read with a site's key: never cached, so another site's key that the remote refuses is not
    // taken for accepted because this one was.
    const refs =
      access.sshPrivateKey !== undefined && remote.transport === 'ssh'
        ? await lsRemote(remote, { timeoutMs: this.timeoutMs, checkHost: this.checkHost, sshPrivateKey: access.sshPrivateKey })
        : await this.refs(remote, false);
    return { ...summary(remote, refs), branches: refs.branches, ssh_url: null };
  }

  private refs(remote: GitRemote, fresh: boolean): Promise<LsRemoteResult> {
    const cached = fresh ? undefined : this.memo.get(remote.url);
    if (cached) return Promise.resolve(cached);
    const pending = this.inFlight.get(remote.url);
    if (pending) return pending;
    const run = lsRemote(remote, { timeoutMs: this.timeoutMs, checkHost: this.checkHost })
      .then((result) => {
        this.memo.set(remote.url, result);
        return result;
      })
      .finally(() => this.inFlight.delete(remote.url));
    this.inFlight.set(remote.url, run);
    return run;
  }
}

/**
 * An ssh remote that answered (its host key known to this server) and refused for want of a key:
 * it admits the per-site deploy keys only, which plain git profiles use (a site's key is offered
 * when a site is bound, see use-cases/deployments/site-source.ts). Not a failure of the profile.
 */
export function wantsDeployKey(remote: GitRemote, error: unknown): boolean {
  return (
    remote.transport === 'ssh' &&
    error instanceof VcsError &&
    error.kind === 'auth_failed' &&
    /Permission denied \([^)]*publickey/.test(error.message)
  );
}

/** The failure of remote `index`, as a VcsError that says which remote it was. */
function atRemote(error: unknown, index: number): VcsError {
  if (error instanceof VcsError) return new VcsError(error.kind, error.message, error.retryAfterSeconds, index);
  return new VcsError('provider_error', error instanceof Error ? error.message : String(error), undefined, index);
}

function summary(remote: GitRemote, refs: LsRemoteResult): RepositorySummary {
  // A plain remote has no web page and no visibility to report.
  return { name: remote.name, default_branch: refs.head, private: null, web_url: null };
}

/** Maps every item with at most CONCURRENCY running; the first failure fails the whole answer. */
async function eachLimited<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += CONCURRENCY) {
    results.push(...(await Promise.all(items.slice(i, i + CONCURRENCY).map(fn))));
  }
  return results;
}
