import { describe, expect, it } from 'vitest';
import { SiteListCache } from '../../src/use-cases/sites/site-list-cache.js';

const SERVER = 'server-a';
const OTHER = 'server-b';

describe('SiteListCache: single sites', () => {
  it('answers only the owning team, and nothing when disabled', () => {
    const cache = new SiteListCache(true);
    cache.setSite('s1', SERVER, { team: 't1', body: '{"uuid":"s1"}' }, cache.siteVersion('s1'));
    expect(cache.getSite('s1', ['t1'])).toBe('{"uuid":"s1"}');
    expect(cache.getSite('s1', ['t2'])).toBeUndefined();
    const off = new SiteListCache(false);
    off.setSite('s1', SERVER, { team: 't1', body: 'x' }, off.siteVersion('s1'));
    expect(off.getSite('s1', ['t1'])).toBeUndefined();
  });

  it('drops a site with its server’s lists on invalidation, and keeps other servers’ entries', () => {
    const cache = new SiteListCache(true);
    cache.setSite('s1', SERVER, { team: 't1', body: 'a' }, cache.siteVersion('s1'));
    cache.setSite('s2', OTHER, { team: 't1', body: 'b' }, cache.siteVersion('s2'));
    cache.set(SERVER, '&', { team: 't1', body: '[a]', link: null }, cache.version(SERVER));
    cache.invalidate(SERVER);
    expect(cache.getSite('s1', ['t1'])).toBeUndefined();
    expect(cache.get(SERVER, '&', ['t1'])).toBeUndefined();
    expect(cache.getSite('s2', ['t1'])).toBe('b');
  });

  it('does not store a read taken before a write to the site’s server, known or not yet known', () => {
    const cache = new SiteListCache(true);
    // First read: the server is not known yet, so any invalidation voids it.
    const first = cache.siteVersion('s1');
    cache.invalidate(OTHER);
    cache.setSite('s1', SERVER, { team: 't1', body: 'stale' }, first);
    expect(cache.getSite('s1', ['t1'])).toBeUndefined();
    cache.setSite('s1', SERVER, { team: 't1', body: 'v1' }, cache.siteVersion('s1'));
    cache.invalidate(SERVER);
    // Later reads: only a write to the site's own server voids them.
    const later = cache.siteVersion('s1');
    cache.invalidate(OTHER);
    cache.setSite('s1', SERVER, { team: 't1', body: 'v2' }, later);
    expect(cache.getSite('s1', ['t1'])).toBe('v2');
    const again = cache.siteVersion('s1');
    cache.invalidate(SERVER);
    cache.setSite('s1', SERVER, { team: 't1', body: 'stale' }, again);
    expect(cache.getSite('s1', ['t1'])).toBeUndefined();
  });

  it('starts over when the cached text passes its byte budget', () => {
    const cache = new SiteListCache(true, 1_000);
    cache.setSite('s1', SERVER, { team: 't', body: 'x'.repeat(300) }, cache.siteVersion('s1'));
    expect(cache.getSite('s1', ['t'])).toBeDefined();
    cache.setSite('s2', SERVER, { team: 't', body: 'y'.repeat(300) }, cache.siteVersion('s2'));
    expect(cache.getSite('s1', ['t'])).toBeUndefined();
    expect(cache.getSite('s2', ['t'])).toBeDefined();
  });
});
