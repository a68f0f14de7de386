import { createHmac, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedWebhook {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/**
 * The receiver's own check of a Standard Webhooks request (node:crypto, not the server's code):
 * HMAC-SHA256 over "id.timestamp.body" keyed with the base64 key after `whsec_`, matching any of
 * the space-separated `v1,<base64>` signatures (during a secret rotation there are two).
 */
export function verifyStandardWebhook(secret: string, r: ReceivedWebhook): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key)
    .update(`${r.headers['webhook-id']}.${r.headers['webhook-timestamp']}.${r.body}`)
    .digest();
  return String(r.headers['webhook-signature'])
    .split(' ')
    .some((sig) => {
      const [version, value] = sig.split(',');
      const given = Buffer.from(value ?? '', 'base64');
      return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
    });
}

/**
 * A webhook receiver on loopback: records every request; `answers[path]` is a list of statuses
 * consumed one per request (the last one kept), 204 for paths without one.
 */
export async function startWebhookReceiver(answers: Record<string, number[]> = {}) {
  const received: ReceivedWebhook[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
      const list = answers[path];
      const status = list ? (list.length > 1 ? (list.shift() as number) : (list[0] as number)) : 204;
      res.writeHead(status).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
