import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Harness, type JsonBody, runId } from '../sites/support/harness.js';
import { curlUntil, pm2List, useHost } from '../sites/support/host.js';
import { startTestHost, stopTestHost } from '../support/test-host.js';

/**
 * Issue 9 items 3 and 5, spec §2.2/§2.5, on a pristine host of its own (test-host.sh, index 3,
 * root's umask 077), with Node installed from the npm registry's official binaries: Node 20.x installs on a bare server;
 * Adonis 7 (Node 24.x or later) upgrades it; a later site's nodejsVersion is ignored and the
 * installed Node reused (one Node per server). The shared host's suite installs 22.x.
 */
const HOST = 'nodes';
const id = runId();
const user = `spn${id}`;
const domain = (name: string) => `${name}-${id}.siteplane.test`;

describe('Node versions on a pristine host: install, the Adonis upgrade, reuse (issue 9; spec §2.2, §2.5)', () => {
  let h: Harness;
  const sites: JsonBody[] = [];

  beforeAll(async () => {
    // Root's umask 077 here (027 on the shared host): what Siteplane installs must not depend on it.
    useHost(await startTestHost(HOST, { index: 3, umask: '077' }));
    h = await Harness.start({ username: user });
    await h.registerServer();
  });

  afterAll(async () => {
    await h?.stop();
    await stopTestHost(HOST);
  });

  const facts = async () => (await h.api('GET', `/api/v1/servers/${h.server}`)).body.facts;

  it(
    'a bare server gets the requested Node 20.x',
    async () => {
      expect((await facts()).node).toBeNull();
      const site = await h.createSite('nodejs-ssr', domain('node20'), { nodejsVersion: '20.x' });
      sites.push(site);
      await h.waitInstalled(site, 10 * 60_000);
      expect((await facts()).node).toMatch(/^20\./);
      expect((await curlUntil(domain('node20'), '/', (a) => a.status === 200, 10_000)).body).toContain('is ready');
    },
    11 * 60_000,
  );

  it(
    'Adonis 7 needs Node 24.x or later: the installed 20.x is upgraded',
    async () => {
      const site = await h.createSite('adonis', domain('adonis7'), { site_type_version: 7 });
      sites.push(site);
      await h.waitInstalled(site, 10 * 60_000);
      expect((await facts()).node).toMatch(/^24\./);
      const log = (await h.operation(site.operation.uuid)).logs.map((l) => l.line);
      expect(log.some((line) => /^Node\.js 20\.\S+ is older than 24\.x that this site needs; upgrading$/.test(line))).toBe(true);
      // The earlier site runs on under PM2, now on the upgraded Node.
      expect((await pm2List(user)).get(domain('node20'))).toBe('online');
      expect((await curlUntil(domain('adonis7'), '/', (a) => a.status === 200, 10_000)).body).toContain('is ready');
    },
    11 * 60_000,
  );

  it(
    'a later site’s nodejsVersion is ignored: the installed Node is reused',
    async () => {
      const site = await h.createSite('nodejs-ssr', domain('reuse'), { nodejsVersion: '22.x' });
      sites.push(site);
      await h.waitInstalled(site, 5 * 60_000);
      expect((await facts()).node).toMatch(/^24\./);
      const log = (await h.operation(site.operation.uuid)).logs.map((l) => l.line);
      expect(log.some((line) => /^Node\.js 24\.\S+ is installed; reusing it$/.test(line))).toBe(true);
    },
    6 * 60_000,
  );

  it('deletes the three sites; the user’s PM2 daemon goes with the last', async () => {
    for (const site of sites) {
      const del = await h.deleteSite(site.uuid);
      await h.waitGone(site, del.operation.uuid, 120_000);
    }
    expect((await pm2List(user)).size).toBe(0);
  }, 400_000);
});
