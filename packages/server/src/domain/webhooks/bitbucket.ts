import {
  deliveryIdFrom,
  type HookReader,
  header,
  isBranchName,
  isSha,
  obj,
  type PushedBranch,
  shortText,
} from './push-reading.js';
import { hmacSha256Matches } from './signatures.js';

/**
 * Bitbucket Cloud: `X-Hub-Signature: sha256=<hex HMAC-SHA256 of the raw body>` (the webhook's
 * secret; note: SHA-256 under the name GitHub uses for SHA-1), `X-Event-Key: repo:push`,
 * `X-Request-UUID` per delivery (`X-Hook-UUID` names the webhook, not the delivery, so it is not a
 * delivery id). Payload: `push.changes[]`, each with `new {type: branch|tag, name, target {hash,
 * message, author {raw, user {display_name}}}}` — `new` is null when the branch was deleted.
 */
export const bitbucketReader: HookReader = {
  provider: 'bitbucket',
  signatureHeader: 'X-Hub-Signature',
  verify(headers, body, secret) {
    const value = header(headers, 'x-hub-signature');
    if (value === null) return 'missing';
    const hex = value.startsWith('sha256=') ? value.slice('sha256='.length) : '';
    return hmacSha256Matches(body, secret, hex) ? 'ok' : 'bad';
  },
  deliveryId: (headers) => deliveryIdFrom(header(headers, 'x-request-uuid')),
  event: (headers) => header(headers, 'x-event-key'),
  read(headers, payload) {
    const event = header(headers, 'x-event-key');
    if (event !== 'repo:push') return { kind: 'skip', event, reason: 'not_push', branch: null };
    const changes = obj(obj(payload)?.push)?.changes;
    if (!Array.isArray(changes)) return { kind: 'malformed', event, detail: 'The push has no `push.changes`.' };
    const branches: PushedBranch[] = [];
    let deleted: string | null | undefined;
    for (const raw of changes) {
      const change = obj(raw);
      const next = obj(change?.new);
      if (!next) {
        const old = obj(change?.old);
        if (old?.type === 'branch') deleted = typeof old.name === 'string' ? old.name : null;
        continue;
      }
      if (next.type !== 'branch' || typeof next.name !== 'string' || !isBranchName(next.name)) continue;
      const target = obj(next.target);
      if (!isSha(target?.hash)) return { kind: 'malformed', event, detail: 'A change names no commit (`new.target.hash`).' };
      const author = obj(target?.author);
      branches.push({
        branch: next.name,
        commit: target?.hash as string,
        message: shortText(target?.message),
        author: nameOfRaw(author?.raw) ?? shortText(obj(author?.user)?.display_name, 255),
      });
    }
    if (branches.length > 0) return { kind: 'push', event, branches };
    if (deleted !== undefined) return { kind: 'skip', event, reason: 'branch_deleted', branch: deleted };
    return { kind: 'skip', event, reason: 'not_branch', branch: null };
  },
};

/** `Jane Doe <jane@example.com>` → `Jane Doe`: the raw author line without its address. */
function nameOfRaw(raw: unknown): string | null {
  const text = shortText(raw, 512);
  if (text === null) return null;
  return shortText(text.replace(/\s*<[^>]*>\s*$/, ''), 255);
}
