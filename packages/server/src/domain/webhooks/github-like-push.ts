import { branchOfRef, isSha, isZeroSha, obj, type PushedBranch, type PushReading, shortText } from './push-reading.js';

/**
 * The push payload GitHub documents, which Gitea and Forgejo copy: `ref`, `after`, `deleted`
 * (GitHub; Gitea sends a zero `after` instead, or a separate `delete` event), `head_commit
 * {id, message, author {name}}` and `commits[]` of the same shape.
 */
export function readGithubLikePush(event: string, payload: unknown): PushReading {
  const body = obj(payload);
  if (!body || typeof body.ref !== 'string') return { kind: 'malformed', event, detail: 'The push has no `ref`.' };
  const branch = branchOfRef(body.ref);
  if (body.deleted === true || isZeroSha(body.after)) return { kind: 'skip', event, reason: 'branch_deleted', branch };
  if (branch === null) return { kind: 'skip', event, reason: 'not_branch', branch: null };
  const head = obj(body.head_commit);
  const commits = Array.isArray(body.commits) ? body.commits.map(obj) : [];
  // The commit the branch now points to: `after`; its message and author from head_commit, or the
  // entry of commits[] with that id (Gitea versions without head_commit).
  const after = isSha(body.after) ? body.after : isSha(head?.id) ? (head?.id as string) : null;
  if (after === null) return { kind: 'malformed', event, detail: 'The push names no commit (`after`).' };
  const commit = head && head.id === after ? head : (commits.find((c) => c?.id === after) ?? head);
  const pushed: PushedBranch = {
    branch,
    commit: after,
    message: shortText(commit?.message),
    author: shortText(obj(commit?.author)?.name, 255),
  };
  return { kind: 'push', event, branches: [pushed] };
}
