/**
 * The rules of an outgoing webhook body beyond its JSON schema, every violation reported at once
 * with its field's path:
 * - `url` is https; plain http only on loopback (a receiver on this machine), as a VC profile's
 *   baseUrl, since the body travels in clear otherwise; no credentials or fragment in it. Where it
 *   points is the egress policy's to say (checked by the use case, and again at every send).
 * - `events` are known types (storage/event-log.ts) or families (`site.*`), expanded when stored,
 *   so the endpoint shows exactly what it receives.
 */
import type { FieldError } from '@siteplane/contract';
import { EVENT_TYPES } from '../../storage/event-log.js';
import { isLoopback } from '../vc-profiles/validate-vc-profile.js';

export function checkOutgoingWebhookBody(body: { url: string; events: string[] }): {
  url: URL | null;
  events: string[];
  errors: FieldError[];
} {
  const errors: FieldError[] = [];
  let url: URL | null = null;
  try {
    url = new URL(body.url);
  } catch {
    errors.push({ field: 'url', code: 'invalid_format', message: 'Not a URL.' });
  }
  if (url && url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) {
    errors.push({
      field: 'url',
      code: 'insecure_url',
      message: 'Use https://; plain http:// is accepted only for a receiver on this machine (loopback).',
    });
    url = null;
  } else if (url && (url.username !== '' || url.password !== '' || url.hash !== '')) {
    errors.push({ field: 'url', code: 'invalid_format', message: 'No credentials or fragment in the URL.' });
    url = null;
  }
  const events = new Set<string>();
  body.events.forEach((item, index) => {
    const matches = item.endsWith('.*')
      ? EVENT_TYPES.filter((t) => t.startsWith(item.slice(0, -1)))
      : EVENT_TYPES.filter((t) => t === item);
    if (matches.length === 0)
      errors.push({
        field: `events.${index}`,
        code: 'invalid_value',
        message: `"${item}" is not an event type (${EVENT_TYPES.join(', ')}; or a family such as site.*).`,
      });
    for (const t of matches) events.add(t);
  });
  return { url, events: EVENT_TYPES.filter((t) => events.has(t)), errors };
}
