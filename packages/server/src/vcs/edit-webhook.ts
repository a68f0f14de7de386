/**
 * A repository's push webhook already created at its provider (create-webhook.ts): its secret
 * replaced, or the hook deleted, through the profile's token, as each API documents it:
 * - GitHub `PATCH /repos/{owner}/{repo}/hooks/{hook_id}` {config {url, content_type, secret,
 *   insecure_ssl}, events, active} → 200; GitHub drops a secret the edit does not repeat, so the
 *   whole config is sent. `DELETE /repos/{owner}/{repo}/hooks/{hook_id}` → 204.
 * - GitLab `PUT /projects/:id/hooks/:hook_id` {url, token, push_events, …} → 200;
 *   `DELETE /projects/:id/hooks/:hook_id` → 204.
 * - Bitbucket Cloud `PUT /repositories/{workspace}/{repo_slug}/hooks/{uid}` {description, url,
 *   active, events, secret} → 200; `DELETE …/hooks/{uid}` → 204.
 * - Gitea/Forgejo `PATCH /repos/{owner}/{repo}/hooks/{id}` {config {url, content_type, secret},
 *   events, active} → 200; `DELETE /repos/{owner}/{repo}/hooks/{id}` → 204.
 * The same rights as creating the hook; a refusal is a VcsError `auth_failed` (401/403) or
 * `not_found` (404: the hook, or the repository, is gone — or hidden from the token, as GitHub does).
 */
import { deleteAt, sendJson } from './json-post.js';
import type { VcsProfileConfig, VcsProviderOptions } from './provider.js';
import { writeTarget } from './write-target.js';

export interface ExistingWebhook {
  /** `<owner>/<repo>` (GitLab: the project's full path). */
  repository: string;
  /** The provider's id of the hook (Bitbucket: its `{uuid}`). */
  id: string;
}

/** Replaces the secret the provider signs with (GitLab: sends as X-Gitlab-Token); the URL is set again too. */
export async function updateWebhookSecret(
  config: VcsProfileConfig,
  hook: ExistingWebhook & { url: string; secret: string },
  options: VcsProviderOptions = {},
): Promise<void> {
  const { provider, target, repoPath } = writeTarget(config, hook.repository, options, [hook.secret], 'update hooks');
  const path = `${repoPath}/hooks/${encodeURIComponent(hook.id)}`;
  switch (provider) {
    case 'github':
      return sendJson(target, 'PATCH', path, {
        active: true,
        events: ['push'],
        config: { url: hook.url, content_type: 'json', secret: hook.secret, insecure_ssl: '0' },
      });
    case 'gitlab':
      return sendJson(target, 'PUT', path, {
        url: hook.url,
        token: hook.secret,
        push_events: true,
        tag_push_events: false,
        merge_requests_events: false,
        enable_ssl_verification: true,
      });
    case 'bitbucket':
      return sendJson(target, 'PUT', path, {
        description: 'Siteplane push to deploy',
        url: hook.url,
        active: true,
        secret: hook.secret,
        events: ['repo:push'],
      });
    case 'gitea':
      return sendJson(target, 'PATCH', path, {
        active: true,
        events: ['push'],
        config: { url: hook.url, content_type: 'json', secret: hook.secret },
      });
  }
}

/** Deletes the hook; a 404 (already gone) is the caller's to read as done. */
export async function deleteWebhook(
  config: VcsProfileConfig,
  hook: ExistingWebhook,
  options: VcsProviderOptions = {},
): Promise<void> {
  const { target, repoPath } = writeTarget(config, hook.repository, options, [], 'delete hooks');
  // The id came from the provider; it is still only ever one path segment.
  await deleteAt(target, `${repoPath}/hooks/${encodeURIComponent(hook.id)}`);
}
