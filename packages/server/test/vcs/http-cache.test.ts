/** The per-profile cache's clock: fresh for the TTL, then stale but kept for revalidation, and bounded. */
import { describe, expect, it } from 'vitest';
import { HttpCache, TtlMemo } from '../../src/vcs/http-cache.js';

describe('HttpCache', () => {
  it('serves an answer fresh for the TTL, then only for revalidation until a 304 revives it', () => {
    let now = 1_000;
    const cache = new HttpCache({ now: () => now, ttlMs: 30_000 });
    cache.put('u', { body: [1], etag: '"a"', headers: {} }, 3);
    now += 29_999;
    expect(cache.fresh('u')?.body).toEqual([1]);
    now += 1;
    expect(cache.fresh('u')).toBeUndefined();
    expect(cache.stale('u')?.etag).toBe('"a"');
    cache.touch('u');
    expect(cache.fresh('u')?.body).toEqual([1]);
  });

  it('forgets the oldest answers beyond its entry and byte bounds', () => {
    const cache = new HttpCache({ maxEntries: 2, maxBytes: 100 });
    cache.put('a', { body: 'a', etag: null, headers: {} }, 10);
    cache.put('b', { body: 'b', etag: null, headers: {} }, 10);
    cache.put('c', { body: 'c', etag: null, headers: {} }, 10);
    expect(cache.stale('a')).toBeUndefined();
    cache.put('big', { body: 'x', etag: null, headers: {} }, 95);
    expect(cache.stale('c')).toBeUndefined();
    expect(cache.stale('big')?.body).toBe('x');
  });
});

describe('TtlMemo', () => {
  it('keeps a value for the TTL only', () => {
    let now = 0;
    const memo = new TtlMemo<string>({ now: () => now, ttlMs: 10 });
    memo.set('k', 'v');
    now = 9;
    expect(memo.get('k')).toBe('v');
    now = 10;
    expect(memo.get('k')).toBeUndefined();
  });
});
