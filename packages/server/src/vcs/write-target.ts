/**
 * Where and how Siteplane writes to a hosted provider's API (webhooks, deploy keys): the API root
 * of the profile, its auth header as each provider documents it, the secrets to scrub from every
 * message, and the repository's path in that API.
 */
import { bitbucketApiBase, bitbucketAuth } from './bitbucket.js';
import { giteaApiBase } from './gitea.js';
import { GITHUB_API_VERSION, githubApiBase } from './github.js';
import { gitlabApiBase } from './gitlab.js';
import type { PostTarget } from './json-post.js';
import { VcsError, type VcsProfileConfig, type VcsProviderOptions } from './provider.js';
import { encodeSegments, splitRepoName } from './repo-name.js';

export type HostedProvider = 'github' | 'gitlab' | 'bitbucket' | 'gitea';

export interface WriteTarget {
  provider: HostedProvider;
  target: PostTarget;
  /**
   * The repository's resource path: GitHub/Gitea `repos/{owner}/{repo}`, GitLab
   * `projects/{url-encoded full path}`, Bitbucket `repositories/{workspace}/{repo_slug}`.
   */
  repoPath: string;
}

/** `what` names the write in the error a plain git profile (no API) gets. */
export function writeTarget(
  config: VcsProfileConfig,
  repository: string,
  options: VcsProviderOptions,
  extraSecrets: string[],
  what: string,
): WriteTarget {
  const base = { fetch: options.fetch, now: options.now, timeoutMs: options.timeoutMs };
  const token = config.token;
  if (config.provider === 'git' || !token) throw new VcsError('auth_failed', `A plain git profile has no API to ${what} with.`);
  switch (config.provider) {
    case 'github':
      return {
        provider: 'github',
        target: {
          ...base,
          provider: 'GitHub',
          baseUrl: githubApiBase(config.baseUrl),
          headers: {
            Accept: 'application/vnd.github+json',
            'X-GitHub-Api-Version': GITHUB_API_VERSION,
            'User-Agent': 'Siteplane',
            Authorization: `Bearer ${token}`,
          },
          secrets: [token, ...extraSecrets],
        },
        repoPath: `repos/${encodeSegments(splitRepoName('GitHub', repository, { min: 2, max: 2 }))}`,
      };
    case 'gitlab':
      return {
        provider: 'gitlab',
        target: {
          ...base,
          provider: 'GitLab',
          baseUrl: gitlabApiBase(config.baseUrl),
          headers: { Accept: 'application/json', 'PRIVATE-TOKEN': token },
          secrets: [token, ...extraSecrets],
        },
        repoPath: `projects/${encodeURIComponent(splitRepoName('GitLab', repository, { min: 2, max: 21 }).join('/'))}`,
      };
    case 'bitbucket': {
      const auth = bitbucketAuth(token);
      return {
        provider: 'bitbucket',
        target: {
          ...base,
          provider: 'Bitbucket',
          baseUrl: bitbucketApiBase(config.baseUrl),
          headers: { Accept: 'application/json', Authorization: auth.header },
          secrets: [...auth.secrets, ...extraSecrets],
        },
        repoPath: `repositories/${encodeSegments(splitRepoName('Bitbucket', repository, { min: 2, max: 2 }))}`,
      };
    }
    case 'gitea':
      return {
        provider: 'gitea',
        target: {
          ...base,
          provider: 'Gitea',
          baseUrl: giteaApiBase(config.baseUrl),
          headers: { Accept: 'application/json', Authorization: `token ${token}` },
          secrets: [token, ...extraSecrets],
        },
        repoPath: `repos/${encodeSegments(splitRepoName('Gitea', repository, { min: 2, max: 2 }))}`,
      };
  }
}
