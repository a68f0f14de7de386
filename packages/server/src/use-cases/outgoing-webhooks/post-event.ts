import { EgressError } from '../../egress/egress-error.js';
import type { StoredEvent } from '../../storage/event-reader.js';
import { signWebhook, webhookEventId } from './webhook-signature.js';

/** Each request gets this long to answer (connect, send, answer). */
const REQUEST_TIMEOUT_MS = 10_000;
/** A receiver's answer is not needed; beyond this it is cut off (and the attempt counts as failed). */
export const WEBHOOK_MAX_ANSWER_BYTES = 64 * 1024;

export interface PostOutcome {
  status: number | null;
  error: string | null;
  ms: number;
}

/**
 * One signed POST of an event to an endpoint (the dispatcher's deliveries and a resend by hand):
 * the body, `webhook-id` (the event's, the same every time), `webhook-timestamp` (now) and one
 * `v1,` signature per secret, space-separated (two during a rotation's grace period). Never throws:
 * what went wrong is the outcome's `error`.
 */
export async function postEvent(
  fetchWith: typeof fetch,
  url: string,
  secrets: string[],
  event: StoredEvent,
  now: Date,
  signal?: AbortSignal,
): Promise<PostOutcome> {
  const body = JSON.stringify({
    type: event.type,
    timestamp: event.created_at,
    data: { seq: event.seq, subject: event.subject, ...event.data },
  });
  const id = webhookEventId(event.seq);
  const timestamp = Math.floor(now.getTime() / 1000);
  const started = performance.now();
  try {
    const res = await fetchWith(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'Siteplane-Webhooks',
        'webhook-id': id,
        'webhook-timestamp': String(timestamp),
        'webhook-signature': secrets.map((secret) => signWebhook(secret, id, timestamp, body)).join(' '),
      },
      body,
      signal: signal
        ? AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), signal])
        : AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const ok = res.status >= 200 && res.status < 300;
    return { status: res.status, error: ok ? null : `the receiver answered ${res.status}`, ms: performance.now() - started };
  } catch (error) {
    return { status: null, error: describe(error), ms: performance.now() - started };
  }
}

function describe(error: unknown): string {
  if (error instanceof EgressError) return error.message;
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))
    return `no answer within ${REQUEST_TIMEOUT_MS / 1000} s`;
  const message = error instanceof Error ? error.message : String(error);
  return `the request failed: ${message}`.slice(0, 300);
}
