// Issue 4 item 5 and "done when": temporary domains in a zone the operator owns. An A record per
// site through the zone's DNS profile, ONE wildcard certificate for the zone shared by every
// temporary site, the record removed with the site. The operator configures the zone after
// creating its DNS profile, and restarts the service, as the README tells them to.
import { Resolver } from 'node:dns/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDigitalOceanStandin } from '../../standins/dns/digitalocean.js';
import type { DnsStandin } from '../../standins/dns/standin-server.js';
import { MOCK_DNS } from '../tls/pebble.js';
import { ctx } from './support/context.js';
import { DnsMirror } from './support/dns-mirror.js';
import { httpsGet, servedCertificate } from './support/https.js';
import { certificateOutcome, createSite, deleteSites, type Ids, logOf } from './support/sites.js';
import { localServer, pebbleEnv, startSuite, type TlsSuite } from './support/suite.js';

async function addresses(name: string): Promise<string[]> {
  const resolver = new Resolver();
  resolver.setServers([MOCK_DNS]);
  return resolver.resolve4(name).catch(() => []);
}

export function freeZoneCases(): void {
  describe('temporary domains in an owned zone (spec §4.1 rule 3, FREE_DOMAIN_ZONE)', () => {
    let zone: string;
    let standin: DnsStandin<Record<string, string>>;
    const mirror = new DnsMirror();
    let suite: TlsSuite;
    let ids: Ids;
    const sites: string[] = [];

    beforeAll(async () => {
      zone = `free-${ctx.run}.test`;
      standin = await startDigitalOceanStandin({ zones: [zone], onChange: mirror.onChange });
      suite = await startSuite({ ...pebbleEnv(), DIGITALOCEAN_API_BASE: standin.url });
      const profile = await suite.api('POST', '/api/v1/dns-profiles', {
        provider: 'digitalocean',
        name: 'temporary zone',
        credentials: standin.credentials,
      });
      expect(profile.status).toBe(201);
      await suite.restart({ FREE_DOMAIN_ZONE: zone, FREE_DOMAIN_DNS_PROFILE: profile.body.uuid });
      // The zone's profile cannot go while the configuration names it.
      const removal = await suite.api('DELETE', `/api/v1/dns-profiles/${profile.body.uuid}`);
      expect(removal.status).toBe(409);
      ids = await localServer(suite, 'sptls');
    }, 120_000);

    afterAll(async () => {
      const problems = suite ? await deleteSites(suite, sites) : [];
      await suite?.dispose();
      await mirror.clear();
      await standin?.close();
      expect(problems).toEqual([]);
    }, 120_000);

    it('two temporary sites resolve, and share one wildcard certificate ordered once', async () => {
      const [a, b] = (await Promise.all([1, 2].map(() => createSite(suite, { ...ids, freeDomain: true })))) as [
        Awaited<ReturnType<typeof createSite>>,
        Awaited<ReturnType<typeof createSite>>,
      ];
      sites.push(a.uuid, b.uuid);
      for (const site of [a, b]) {
        expect(site.domain).toMatch(new RegExp(`^[a-z0-9]{16}[0-9]{4}\\.${zone.replace(/\./g, '\\.')}$`));
        expect(site.body).toMatchObject({ free_domain: true, free_domain_base: zone, ssl: { enabled: true } });
      }
      const outcomes = await Promise.all([a, b].map((site) => certificateOutcome(suite, site.uuid, 90_000)));
      for (const { op, site } of outcomes) {
        expect(op.status, logOf(op)).toBe('succeeded');
        expect(site).toMatchObject({ status: 'installed', ssl: { status: 'active', error: null } });
      }
      // One order at the CA; the other site reused it (or waited for it).
      expect(outcomes.filter(({ op }) => logOf(op).includes('Ordering a certificate')).length).toBe(1);
      const rows = await suite.storage.db.selectFrom('certificates').selectAll().execute();
      expect(rows.map((r) => [r.scope, JSON.parse(r.domains)])).toEqual([[`zone:${zone}`, [`*.${zone}`]]]);

      await mirror.flush();
      for (const site of [a, b]) {
        expect(
          standin
            .records()
            .filter((r) => r.type === 'A' && r.name === site.domain)
            .map((r) => r.value),
        ).toEqual(['127.0.0.1']);
        expect(await addresses(site.domain)).toEqual(['127.0.0.1']);
        const served = await servedCertificate(site.domain);
        expect(served.names).toEqual([`*.${zone}`]);
        expect(served.serial).toBe(rows[0]?.serial);
        expect(await httpsGet(site.domain, ctx.roots.letsencrypt)).toMatchObject({ exit: 0, status: 200 });
      }
    }, 150_000);

    it('deleting a temporary site removes its A record; the other keeps the shared certificate', async () => {
      const [gone, kept] = sites as [string, string];
      const goneDomain = (await suite.api('GET', `/api/v1/sites/${gone}`)).body.domain as string;
      const keptDomain = (await suite.api('GET', `/api/v1/sites/${kept}`)).body.domain as string;
      expect(await deleteSites(suite, [gone])).toEqual([]);
      sites.splice(sites.indexOf(gone), 1);
      await mirror.flush();
      expect(standin.records().filter((r) => r.name === goneDomain)).toEqual([]);
      expect(await addresses(goneDomain)).toEqual([]);
      expect(await httpsGet(keptDomain, ctx.roots.letsencrypt)).toMatchObject({ exit: 0, status: 200 });
      expect(await suite.storage.db.selectFrom('certificates').select('scope').execute()).toEqual([{ scope: `zone:${zone}` }]);
    }, 90_000);
  });
}
