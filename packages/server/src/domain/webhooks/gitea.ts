import { readGithubLikePush } from './github-like-push.js';
import { deliveryIdFrom, type Headers, type HookReader, header } from './push-reading.js';
import { hmacSha256Matches } from './signatures.js';

/**
 * Gitea and Forgejo: `X-Gitea-Signature` (Forgejo also `X-Forgejo-Signature`): the hex
 * HMAC-SHA256 of the raw body, without prefix; `X-Gitea-Event` / `X-Forgejo-Event: push`;
 * `X-Gitea-Delivery` / `X-Forgejo-Delivery`. The payload is GitHub's shape; a deleted branch comes
 * as a `delete` event (or a push whose `after` is all zeros).
 */
const either = (headers: Headers, name: string) => header(headers, `x-gitea-${name}`) ?? header(headers, `x-forgejo-${name}`);

export const giteaReader: HookReader = {
  provider: 'gitea',
  signatureHeader: 'X-Gitea-Signature',
  verify(headers, body, secret) {
    const value = either(headers, 'signature');
    if (value === null) return 'missing';
    return hmacSha256Matches(body, secret, value) ? 'ok' : 'bad';
  },
  deliveryId: (headers) => deliveryIdFrom(either(headers, 'delivery')),
  event: (headers) => either(headers, 'event'),
  read(headers, payload) {
    const event = either(headers, 'event');
    if (event === 'delete') return { kind: 'skip', event, reason: 'branch_deleted', branch: null };
    if (event !== 'push') return { kind: 'skip', event, reason: 'not_push', branch: null };
    return readGithubLikePush(event, payload);
  },
};
