/**
 * One interface for every version-control provider (spec §4.2, issue 5). Each provider lives in its
 * own file in this folder; `create-vcs-provider.ts` picks one for a profile.
 */
export type VcsProviderName = 'github' | 'gitlab' | 'bitbucket' | 'gitea' | 'git';

export interface VcsProfileConfig {
  provider: VcsProviderName;
  /** API base for self-hosted providers (GitHub Enterprise, GitLab, Gitea/Forgejo); provider default otherwise. */
  baseUrl: string | null;
  /** Decrypted token; null for public or plain-git profiles. */
  token: string | null;
  /** For `git` profiles: remote URLs (https, ssh, git; http to loopback), optionally with credentials. */
  repositories: string[];
}

export interface RepositorySummary {
  /** `<owner>/<repo>`, deeper for GitLab groups. */
  name: string;
  default_branch: string | null;
  private: boolean | null;
  web_url: string | null;
}

export interface Branch {
  name: string;
  commit: string | null;
}

export interface RepositoryDetail extends RepositorySummary {
  branches: Branch[];
  /**
   * The provider's ssh clone address (`git@github.com:acme/shop.git`), fetched with a deploy key;
   * null when it gives none (and for plain git profiles, whose remotes are listed as given).
   */
  ssh_url: string | null;
}

export interface VcsProvider {
  /** The account the credentials authenticate as (login/username); checks the token. */
  whoami(): Promise<{ account: string | null }>;
  /** Every repository of the profile, all pages fetched. */
  listRepositories(): Promise<RepositorySummary[]>;
  /**
   * One repository with its default branch and every branch. Throws VcsError 'not_found' when
   * unknown. `sshPrivateKey`: a site's deploy key, which plain git offers to an ssh remote (the
   * only way to read a remote that admits deploy keys only); hosted providers read through the API.
   */
  getRepository(name: string, access?: { sshPrivateKey?: string }): Promise<RepositoryDetail>;
}

/** How a provider is built; everything optional, defaults are the real world. */
export interface VcsProviderOptions {
  /** HTTP client for hosted providers; global fetch unless a test injects its own. */
  fetch?: typeof fetch;
  /** Milliseconds since the epoch; the cache's clock and the base of rate-limit reset times. */
  now?: () => number;
  /** How long a provider's answer is reused without asking again (default 30 s). */
  cacheTtlMs?: number;
  /** Per request (HTTP) or per `git ls-remote` run (default 15 s / 20 s). */
  timeoutMs?: number;
  /**
   * The egress policy's resolving check, run on a git remote's host right before git runs: every
   * address it returns is allowed (git's HTTPS is pinned to them); it throws an EgressError when
   * the host may not be reached. Unset: no check (the composition root always sets it).
   */
  checkHost?: (host: string) => Promise<string[]>;
}

export type VcsErrorKind = 'auth_failed' | 'rate_limited' | 'unreachable' | 'not_found' | 'provider_error' | 'target_not_allowed';

/** A provider failure; never turned into an empty list (NOTES: peers' users were confused by that). */
export class VcsError extends Error {
  constructor(
    readonly kind: VcsErrorKind,
    message: string,
    /** Seconds until the provider's rate limit resets, when known. */
    readonly retryAfterSeconds?: number,
    /** For `git` profiles: the index in `repositories` of the remote that failed, so a 422 can name it. */
    readonly remoteIndex?: number,
  ) {
    super(message);
    this.name = 'VcsError';
  }
}

/**
 * Several remotes of a `git` profile failed their check at once. Each failure keeps its own kind
 * and index, so profile creation reports every bad remote in one answer; the aggregate's kind is
 * the first failure's.
 */
export class VcsRemotesError extends VcsError {
  constructor(readonly failures: readonly VcsError[]) {
    const first = failures[0];
    if (!first) throw new Error('VcsRemotesError needs at least one failure');
    super(first.kind, failures.map((failure) => failure.message).join('; '), first.retryAfterSeconds, first.remoteIndex);
    this.name = 'VcsRemotesError';
  }
}
