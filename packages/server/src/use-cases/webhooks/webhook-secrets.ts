import { randomBytes } from 'node:crypto';
import { hashToken } from '../../storage/tokens.js';

/**
 * The two secrets of a site's webhook. The shared secret is hex (every provider accepts it in its
 * secret field); the trigger URL's token is 256 random bits, URL-safe, and kept only as its
 * SHA-256, as API tokens are.
 */
export const TRIGGER_TOKEN_PREFIX = 'sph_';
const TRIGGER_TOKEN_RE = /^sph_[A-Za-z0-9_-]{43}$/;

export function newHookSecret(): string {
  return randomBytes(32).toString('hex');
}

export function newTriggerToken(): { token: string; hash: string } {
  const token = `${TRIGGER_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashToken(token) };
}

/** The stored hash of a presented trigger token, or null when it cannot be one of ours. */
export function triggerHashOf(token: string): string | null {
  return TRIGGER_TOKEN_RE.test(token) ? hashToken(token) : null;
}
