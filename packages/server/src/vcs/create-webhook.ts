/**
 * Creates the push webhook of a repository at its provider, through the profile's token, as each
 * API documents it (the providers' create-hook endpoints; see test/standins/vcs/hook-endpoints.ts):
 * GitHub `POST /repos/{owner}/{repo}/hooks`, GitLab `POST /projects/:id/hooks`, Bitbucket Cloud
 * `POST /repositories/{workspace}/{repo_slug}/hooks`, Gitea/Forgejo `POST /repos/{owner}/{repo}/hooks`.
 * Only push events, JSON bodies, TLS verification on. The token needs the right to manage hooks
 * (GitHub `admin:repo_hook` or a fine-grained "Webhooks: write"; GitLab Maintainer; Bitbucket
 * `webhook`; Gitea repository admin); a refusal is a VcsError `auth_failed` or `not_found`.
 */
import { postJson } from './json-post.js';
import { asObject, requiredText } from './json-shape.js';
import type { VcsProfileConfig, VcsProviderOptions } from './provider.js';
import { writeTarget } from './write-target.js';

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
  const { provider, target, repoPath } = writeTarget(config, hook.repository, options, [hook.secret], 'create hooks');
  switch (provider) {
    case 'github': {
      const body = await postJson(target, `${repoPath}/hooks`, {
        name: 'web',
        active: true,
        events: ['push'],
        config: { url: hook.url, content_type: 'json', secret: hook.secret, insecure_ssl: '0' },
      });
      return { id: idOf('GitHub', body, 'id') };
    }
    case 'gitlab': {
      const body = await postJson(target, `${repoPath}/hooks`, {
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
      const body = await postJson(target, `${repoPath}/hooks`, {
        description: 'Siteplane push to deploy',
        url: hook.url,
        active: true,
        secret: hook.secret,
        events: ['repo:push'],
      });
      return { id: idOf('Bitbucket', body, 'uuid') };
    }
    case 'gitea': {
      const body = await postJson(target, `${repoPath}/hooks`, {
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
