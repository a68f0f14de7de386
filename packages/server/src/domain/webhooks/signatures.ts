import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Checks of an incoming hook against the site's secret, in constant time: a comparison that stops
 * at the first differing byte would tell an attacker, request by request, how much of a forged
 * signature is right.
 */

/** `hex` is the HMAC-SHA256 of `body` under `secret` (lowercase or uppercase hex, nothing around it). */
export function hmacSha256Matches(body: Buffer, secret: string, hex: string): boolean {
  const expected = createHmac('sha256', secret).update(body).digest();
  // Not hex, or not 32 bytes: compared anyway against a value of the right length, so a malformed
  // header costs the same as a wrong one.
  const wellFormed = /^[0-9a-fA-F]{64}$/.test(hex);
  const given = wellFormed ? Buffer.from(hex, 'hex') : Buffer.alloc(32);
  const same = timingSafeEqual(expected, given);
  return wellFormed && same;
}

/**
 * A shared secret sent as is (GitLab's X-Gitlab-Token). Both sides are hashed first so the
 * comparison has a fixed length and does not reveal the secret's.
 */
export function sharedTokenMatches(given: string, secret: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(secret, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** The hex HMAC-SHA256 a provider sends; for tests and for stand-ins. */
export function signHmacSha256(body: Buffer | string, secret: string): string {
  return createHmac('sha256', secret).update(body).digest('hex');
}
