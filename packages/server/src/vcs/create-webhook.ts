/**
 * Creates the push webhook of a repository at its provider, through the profile's token, as each
 * API documents it (the providers' create-hook endpoints; see test/standins/vcs/hook-endpoints.ts):
 * GitHub `POST /repos/{owner}/{repo}/hooks`, GitLab `POST /projects/:id/hooks`, Bitbucket Cloud
 * `POST /repositories/{workspace}/{repo_slug}/hooks`, Gitea/Forgejo `POST /repos/{owner}/{repo}/hooks`.
 * Only push events, JSON bodies, TLS verification on. The token needs the right to manage hooks
 * (GitHub `admin:repo_hook` or a fine-grained "Webhooks: write"; GitLab Maintainer; Bitbucket
 * `webhook`; Gitea repository admin); a refusal is a VcsError `auth_failed` or `not_found`.
 */
import { bitbucketApiBase, bitbucketAuth } from './bitbucket.js';
import { giteaApiBase } from './gitea.js';
import { GITHUB_API_VERSION, githubApiBase } from './github.js';
import { gitlabApiBase } from './gitlab.js';
import { type PostTarget, postJson } from './json-post.js';
import { asObject, requiredText } from './json-shape.js';
import { VcsError, type VcsProfileConfig, type VcsProviderOptions } from './provider.js';
import { encodeSegments, splitRepoName } from './repo-name.js';

export interface NewWebhook {
  /** `<owner>/<repo>` (GitLab: the project's full path). */
  repository: string;
  /** Where the provider sends its hooks (this Siteplane's `/api/v1/hooks/<provider>/<site>`). */
  url: string;
  /** The shared secret the provider signs with (GitLab: sends back as X-Gitlab-Token). */
  secret: string;
}

/** The provider's id of the hook created. */
export async function createWebhook(
  config: VcsProfileConfig,
  hook: NewWebhook,
  options: VcsProviderOptions = {},
): Promise<{ id: string }> {
  const base = { fetch: options.fetch, now: options.now, timeoutMs: options.timeoutMs };
  const token = config.token;
  if (config.provider === 'git' || !token)
    throw new VcsError('auth_failed', 'A plain git profile has no API to create hooks with.');
  switch (config.provider) {
    case 'github': {
      const target: PostTarget = {
        ...base,
        provider: 'GitHub',
        baseUrl: githubApiBase(config.baseUrl),
        headers: {
          Accept: 'application/vnd.github+json',
          'X-GitHub-Api-Version': GITHUB_API_VERSION,
          'User-Agent': 'Siteplane',
          Authorization: `Bearer ${token}`,
        },
        secrets: [token, hook.secret],
      };
      const path = `repos/${encodeSegments(splitRepoName('GitHub', hook.repository, { min: 2, max: 2 }))}/hooks`;
      const body = await postJson(target, path, {
        name: 'web',
        active: true,
        events: ['push'],
        config: { url: hook.url, content_type: 'json', secret: hook.secret, insecure_ssl: '0' },
      });
      return { id: idOf('GitHub', body, 'id') };
    }
    case 'gitlab': {
      const target: PostTarget = {
        ...base,
        provider: 'GitLab',
        baseUrl: gitlabApiBase(config.baseUrl),
        headers: { Accept: 'application/json', 'PRIVATE-TOKEN': token },
        secrets: [token, hook.secret],
      };
      const id = encodeURIComponent(splitRepoName('GitLab', hook.repository, { min: 2, max: 21 }).join('/'));
      const body = await postJson(target, `projects/${id}/hooks`, {
        url: hook.url,
        token: hook.secret,
        push_events: true,
        tag_push_events: false,
        merge_requests_events: false,
        enable_ssl_verification: true,
      });
      return { id: idOf('GitLab', body, 'id') };
    }
    case 'bitbucket': {
      const auth = bitbucketAuth(token);
      const target: PostTarget = {
        ...base,
        provider: 'Bitbucket',
        baseUrl: bitbucketApiBase(config.baseUrl),
        headers: { Accept: 'application/json', Authorization: auth.header },
        secrets: [...auth.secrets, hook.secret],
      };
      const path = `repositories/${encodeSegments(splitRepoName('Bitbucket', hook.repository, { min: 2, max: 2 }))}/hooks`;
      const body = await postJson(target, path, {
        description: 'Siteplane push to deploy',
        url: hook.url,
        active: true,
        secret: hook.secret,
        events: ['repo:push'],
      });
      return { id: idOf('Bitbucket', body, 'uuid') };
    }
    case 'gitea': {
      const target: PostTarget = {
        ...base,
        provider: 'Gitea',
        baseUrl: giteaApiBase(config.baseUrl),
        headers: { Accept: 'application/json', Authorization: `token ${token}` },
        secrets: [token, hook.secret],
      };
      const path = `repos/${encodeSegments(splitRepoName('Gitea', hook.repository, { min: 2, max: 2 }))}/hooks`;
      const body = await postJson(target, path, {
        type: 'gitea',
        active: true,
        events: ['push'],
        config: { url: hook.url, content_type: 'json', secret: hook.secret },
      });
      return { id: idOf('Gitea', body, 'id') };
    }
  }
}

function idOf(provider: string, body: unknown, field: string): string {
  const value = asObject(provider, body, 'the created hook')[field];
  if (typeof value === 'number') return String(value);
  return requiredText(provider, body, 'the created hook', field);
}
