import { createHmac, randomBytes } from 'node:crypto';

/**
 * The Standard Webhooks signing scheme (standardwebhooks.com): a secret `whsec_<base64 key>`; each
 * request carries `webhook-id`, `webhook-timestamp` (unix seconds) and `webhook-signature:
 * v1,<base64 HMAC-SHA256(key, "<id>.<timestamp>.<body>")>`, so receivers can use any of the
 * scheme's libraries. The id is the event's, the same on every retry, so a receiver can drop repeats.
 */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(24).toString('base64')}`;
}

export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/** The id of the event in `webhook-id`: stable across retries and endpoints. */
export const webhookEventId = (seq: number) => `evt_${seq}`;

/**
 * The secrets that sign an endpoint's deliveries now: its secret, and after a rotation the previous
 * one until its grace period ends (receivers still holding it keep verifying).
 */
export function signingSecrets(
  row: { secret_enc: string; previous_secret_enc: string | null; previous_secret_expires_at: string | null },
  open: (sealed: string) => string,
  now: Date,
): string[] {
  const current = open(row.secret_enc);
  const previousLive =
    row.previous_secret_enc !== null &&
    row.previous_secret_expires_at !== null &&
    Date.parse(row.previous_secret_expires_at) > now.getTime();
  return previousLive ? [current, open(row.previous_secret_enc as string)] : [current];
}
