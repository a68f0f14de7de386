import { describe, expect, it } from 'vitest';
import { SiteListCache, type SiteListStamp, type SiteStamp } from '../../src/use-cases/sites/site-list-cache.js';

const SERVER = 'server-a';
const OTHER = 'server-b';

/** In one process the stamps are synchronous. */
const at = (cache: SiteListCache, site: string) => cache.siteStamp(site) as SiteStamp;
const listAt = (cache: SiteListCache, server: string) => cache.stamp(server) as SiteListStamp;

describe('SiteListCache: single sites', () => {
  it('answers only the owning team, and nothing when disabled', () => {
    const cache = new SiteListCache(true);
    cache.setSite('s1', SERVER, { team: 't1', body: Buffer.from('{"uuid":"s1"}') }, at(cache, 's1'));
    expect(cache.getSite('s1', ['t1'], at(cache, 's1'))?.toString()).toBe('{"uuid":"s1"}');
    expect(cache.getSite('s1', ['t2'], at(cache, 's1'))).toBeUndefined();
    const off = new SiteListCache(false);
    off.setSite('s1', SERVER, { team: 't1', body: Buffer.from('x') }, at(off, 's1'));
    expect(off.getSite('s1', ['t1'], at(off, 's1'))).toBeUndefined();
  });

  it('drops a site with its server’s lists on invalidation, and keeps other servers’ entries', () => {
    const cache = new SiteListCache(true);
    cache.setSite('s1', SERVER, { team: 't1', body: Buffer.from('a') }, at(cache, 's1'));
    cache.setSite('s2', OTHER, { team: 't1', body: Buffer.from('b') }, at(cache, 's2'));
    cache.set(SERVER, '&', { team: 't1', body: Buffer.from('[a]'), link: null }, listAt(cache, SERVER));
    cache.invalidate(SERVER);
    expect(cache.getSite('s1', ['t1'], at(cache, 's1'))).toBeUndefined();
    expect(cache.get(SERVER, '&', ['t1'], listAt(cache, SERVER))).toBeUndefined();
    expect(cache.getSite('s2', ['t1'], at(cache, 's2'))?.toString()).toBe('b');
  });

  it('does not store a read taken before a write to the site’s server, known or not yet known', () => {
    const cache = new SiteListCache(true);
    // First read: the server is not known yet, so any invalidation voids it.
    const first = at(cache, 's1');
    cache.invalidate(OTHER);
    cache.setSite('s1', SERVER, { team: 't1', body: Buffer.from('stale') }, first);
    expect(cache.getSite('s1', ['t1'], at(cache, 's1'))).toBeUndefined();
    cache.setSite('s1', SERVER, { team: 't1', body: Buffer.from('v1') }, at(cache, 's1'));
    cache.invalidate(SERVER);
    // Later reads: only a write to the site's own server voids them.
    const later = at(cache, 's1');
    cache.invalidate(OTHER);
    cache.setSite('s1', SERVER, { team: 't1', body: Buffer.from('v2') }, later);
    expect(cache.getSite('s1', ['t1'], at(cache, 's1'))?.toString()).toBe('v2');
    const again = at(cache, 's1');
    cache.invalidate(SERVER);
    cache.setSite('s1', SERVER, { team: 't1', body: Buffer.from('stale') }, again);
    expect(cache.getSite('s1', ['t1'], at(cache, 's1'))).toBeUndefined();
  });

  it('starts over when the cached bodies pass their byte budget', () => {
    const cache = new SiteListCache(true, null, 1_000);
    cache.setSite('s1', SERVER, { team: 't', body: Buffer.from('x'.repeat(600)) }, at(cache, 's1'));
    expect(cache.getSite('s1', ['t'], at(cache, 's1'))).toBeDefined();
    cache.setSite('s2', SERVER, { team: 't', body: Buffer.from('y'.repeat(600)) }, at(cache, 's2'));
    expect(cache.getSite('s1', ['t'], at(cache, 's1'))).toBeUndefined();
    expect(cache.getSite('s2', ['t'], at(cache, 's2'))).toBeDefined();
  });
});

describe('SiteListCache: single sites with a version shared between processes', () => {
  it('serves a site only under the shared version it was read at; never before its server is known', async () => {
    let shared = 1;
    const cache = new SiteListCache(true, async () => String(shared));
    // Server not known yet: nothing to check another process's writes against, so nothing is stored.
    const first = await cache.siteStamp('s1');
    expect(first.stamp).toBeNull();
    cache.setSite('s1', SERVER, { team: 't1', body: Buffer.from('v1') }, first);
    expect(cache.getSite('s1', ['t1'], await cache.siteStamp('s1'))).toBeUndefined();
    // Now known: stored under shared version 1.
    cache.setSite('s1', SERVER, { team: 't1', body: Buffer.from('v1') }, await cache.siteStamp('s1'));
    expect(cache.getSite('s1', ['t1'], await cache.siteStamp('s1'))?.toString()).toBe('v1');
    // Another process wrote to the server: this process was not told, the shared version says so.
    shared = 2;
    expect(cache.getSite('s1', ['t1'], await cache.siteStamp('s1'))).toBeUndefined();
  });
});
