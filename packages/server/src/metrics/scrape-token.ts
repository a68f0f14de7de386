import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Checks a scrape's `Authorization: Bearer <token>` against SITEPLANE_METRICS_TOKEN in constant
 * time (both sides hashed first, so their lengths never differ).
 */
export function scrapeTokenCheck(token: string): (authorization: string | undefined) => boolean {
  const expected = digest(token);
  return (authorization) => {
    if (!authorization?.startsWith('Bearer ')) return false;
    return timingSafeEqual(digest(authorization.slice(7).trim()), expected);
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
