/**
 * A repository's read-only deploy key at its provider, added and removed through the profile's
 * token, as each API documents it:
 * - GitHub `POST /repos/{owner}/{repo}/keys` {title, key, read_only: true} → 201 {id, …};
 *   `DELETE /repos/{owner}/{repo}/keys/{key_id}` → 204. Needs admin on the repository (classic
 *   `repo` scope, or fine-grained "Administration: write"); without it GitHub answers 404 or 403.
 * - GitLab `POST /projects/:id/deploy_keys` {title, key, can_push: false} → 201 {id, …};
 *   `DELETE /projects/:id/deploy_keys/:key_id` → 204. Needs Maintainer (403 otherwise).
 * - Bitbucket Cloud `POST /repositories/{workspace}/{repo_slug}/deploy-keys` {key, label} → 200
 *   {id, type: "deploy_key", …} (Bitbucket's deploy keys are always read-only);
 *   `DELETE …/deploy-keys/{key_id}` → 204. Needs `repository:admin` (403 otherwise).
 * - Gitea/Forgejo `POST /repos/{owner}/{repo}/keys` {title, key, read_only: true} → 201 {id, …};
 *   `DELETE /repos/{owner}/{repo}/keys/{id}` → 204. Needs repository admin (403 otherwise).
 * A refusal is a VcsError (`auth_failed` for 401/403, `not_found` for 404), as for every read.
 */
import { deleteAt, postJson } from './json-post.js';
import { asObject, requiredText } from './json-shape.js';
import type { VcsProfileConfig, VcsProviderOptions } from './provider.js';
import { writeTarget } from './write-target.js';

export interface NewDeployKey {
  /** `<owner>/<repo>` (GitLab: the project's full path). */
  repository: string;
  /** Shown in the provider's list of deploy keys. */
  title: string;
  /** The OpenSSH public key line (`ssh-ed25519 AAAA… comment`). */
  publicKey: string;
}

/** Adds the key read-only; answers the provider's id of it. */
export async function addDeployKey(
  config: VcsProfileConfig,
  key: NewDeployKey,
  options: VcsProviderOptions = {},
): Promise<{ id: string }> {
  const { provider, target, repoPath } = writeTarget(config, key.repository, options, [], 'add deploy keys');
  switch (provider) {
    case 'github':
    case 'gitea': {
      const body = await postJson(target, `${repoPath}/keys`, { title: key.title, key: key.publicKey, read_only: true });
      return { id: idOf(target.provider, body) };
    }
    case 'gitlab': {
      const body = await postJson(target, `${repoPath}/deploy_keys`, { title: key.title, key: key.publicKey, can_push: false });
      return { id: idOf(target.provider, body) };
    }
    case 'bitbucket': {
      const body = await postJson(target, `${repoPath}/deploy-keys`, { key: key.publicKey, label: key.title });
      return { id: idOf(target.provider, body) };
    }
  }
}

/** Removes the key the provider knows by `id` from the repository. */
export async function removeDeployKey(
  config: VcsProfileConfig,
  key: { repository: string; id: string },
  options: VcsProviderOptions = {},
): Promise<void> {
  const { provider, target, repoPath } = writeTarget(config, key.repository, options, [], 'remove deploy keys');
  // The id came from the provider; it is still only ever one path segment.
  const id = encodeURIComponent(key.id);
  const path = provider === 'gitlab' ? 'deploy_keys' : provider === 'bitbucket' ? 'deploy-keys' : 'keys';
  await deleteAt(target, `${repoPath}/${path}/${id}`);
}

function idOf(provider: string, body: unknown): string {
  const value = asObject(provider, body, 'the added deploy key').id;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return requiredText(provider, body, 'the added deploy key', 'id');
}
