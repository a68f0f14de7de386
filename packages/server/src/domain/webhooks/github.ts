import { readGithubLikePush } from './github-like-push.js';
import { deliveryIdFrom, type HookReader, header } from './push-reading.js';
import { hmacSha256Matches } from './signatures.js';

/**
 * GitHub (and GitHub Enterprise Server): `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw
 * body>`, `X-GitHub-Event` (`push`; `ping` when the hook is created), `X-GitHub-Delivery` (a GUID
 * that a redelivery repeats). The legacy SHA-1 `X-Hub-Signature` is not accepted.
 */
export const githubReader: HookReader = {
  provider: 'github',
  signatureHeader: 'X-Hub-Signature-256',
  verify(headers, body, secret) {
    const value = header(headers, 'x-hub-signature-256');
    if (value === null) return 'missing';
    const hex = value.startsWith('sha256=') ? value.slice('sha256='.length) : '';
    return hmacSha256Matches(body, secret, hex) ? 'ok' : 'bad';
  },
  deliveryId: (headers) => deliveryIdFrom(header(headers, 'x-github-delivery')),
  event: (headers) => header(headers, 'x-github-event'),
  read(headers, payload) {
    const event = header(headers, 'x-github-event');
    if (event === 'ping') return { kind: 'ping', event };
    if (event !== 'push') return { kind: 'skip', event, reason: 'not_push', branch: null };
    return readGithubLikePush(event, payload);
  },
};
