import { branchOfRef, deliveryIdFrom, type HookReader, header, isSha, isZeroSha, obj, shortText } from './push-reading.js';
import { sharedTokenMatches } from './signatures.js';

/**
 * GitLab (gitlab.com and self-managed): no signature; the hook's secret token comes back as is in
 * `X-Gitlab-Token`. `X-Gitlab-Event: Push Hook` (`Tag Push Hook` for tags). The delivery id is
 * `Idempotency-Key` (GitLab 17.4+, the same on every retry of one event), else
 * `X-Gitlab-Event-UUID`. Payload: `object_kind: push`, `ref`, `after`, `checkout_sha` (null when
 * the branch was deleted), `commits[] {id, message, author {name}}`.
 */
export const gitlabReader: HookReader = {
  provider: 'gitlab',
  signatureHeader: 'X-Gitlab-Token',
  verify(headers, _body, secret) {
    const value = header(headers, 'x-gitlab-token');
    if (value === null) return 'missing';
    return sharedTokenMatches(value, secret) ? 'ok' : 'bad';
  },
  deliveryId: (headers) =>
    deliveryIdFrom(header(headers, 'idempotency-key')) ?? deliveryIdFrom(header(headers, 'x-gitlab-event-uuid')),
  event: (headers) => header(headers, 'x-gitlab-event'),
  read(headers, payload) {
    const event = header(headers, 'x-gitlab-event');
    if (event !== 'Push Hook') return { kind: 'skip', event, reason: 'not_push', branch: null };
    const body = obj(payload);
    if (!body || typeof body.ref !== 'string') return { kind: 'malformed', event, detail: 'The push has no `ref`.' };
    const branch = branchOfRef(body.ref);
    if (isZeroSha(body.after)) return { kind: 'skip', event, reason: 'branch_deleted', branch };
    if (branch === null) return { kind: 'skip', event, reason: 'not_branch', branch: null };
    const commitSha = isSha(body.checkout_sha) ? body.checkout_sha : isSha(body.after) ? body.after : null;
    if (commitSha === null) return { kind: 'malformed', event, detail: 'The push names no commit (`checkout_sha`).' };
    const commits = Array.isArray(body.commits) ? body.commits.map(obj) : [];
    const commit = commits.find((c) => c?.id === commitSha) ?? null;
    return {
      kind: 'push',
      event,
      branches: [
        {
          branch,
          commit: commitSha,
          message: shortText(commit?.message),
          author: shortText(obj(commit?.author)?.name, 255),
        },
      ],
    };
  },
};
