// Issue 4 item 5 and issue 10 item 11: temporary domains in a zone the operator owns. An A record
// per site through the zone's DNS profile, a certificate of its own for each temporary name
// (DNS-01 through that profile) and never the zone's wildcard, whose key on one tenant's server
// would serve every other tenant's names; the record removed with the site. The operator
// configures the zone after creating its DNS profile, and restarts the service, as the README says.
import { createPublicKey, X509Certificate } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCertificate } from '../../../src/tls/renewal.js';
import { startDigitalOceanStandin } from '../../standins/dns/digitalocean.js';
import type { DnsStandin } from '../../standins/dns/standin-server.js';
import { MOCK_DNS } from '../tls/pebble.js';
import { ctx } from './support/context.js';
import { DnsMirror } from './support/dns-mirror.js';
import { httpsGet, servedCertificate } from './support/https.js';
import { certificateOutcome, createSite, deleteSites, type Ids, logOf } from './support/sites.js';
import { localServer, pebbleEnv, startSuite, type TlsSuite } from './support/suite.js';

const CERTIFICATES = '/etc/siteplane/certificates';

/** What each installed certificate directory of the zone holds: the names its key can serve. */
function installedInZone(zone: string): { dir: string; names: string[]; keyMatches: boolean }[] {
  return readdirSync(CERTIFICATES)
    .filter((dir) => dir.endsWith(`.${zone}`))
    .map((dir) => {
      const chain = readFileSync(`${CERTIFICATES}/${dir}/current/fullchain.pem`, 'utf8');
      const key = readFileSync(`${CERTIFICATES}/${dir}/current/privkey.pem`, 'utf8');
      const publicKey = new X509Certificate(chain).publicKey.export({ type: 'spki', format: 'der' });
      const fromKey = createPublicKey(key).export({ type: 'spki', format: 'der' });
      return { dir, names: parseCertificate(chain).domains, keyMatches: publicKey.equals(fromKey) };
    });
}

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

    it('two temporary sites resolve, and get two certificates, each for its own name only; no wildcard anywhere', async () => {
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
        // One order per name, proven by DNS-01 through the zone's profile.
        expect(logOf(op)).toContain(`Ordering a certificate for ${site.domain} from`);
      }
      const rows = await suite.storage.db.selectFrom('certificates').selectAll().orderBy('scope').execute();
      expect(rows.map((r) => [r.scope, JSON.parse(r.domains)]).sort()).toEqual(
        [
          [`site:${a.uuid}`, [a.domain]],
          [`site:${b.uuid}`, [b.domain]],
        ].sort(),
      );
      // Both orders are recorded against the zone's budget, as new names of their teams.
      const issuances = await suite.storage.db.selectFrom('free_domain_issuances').selectAll().execute();
      expect(issuances.map((r) => [r.name, r.zone, r.outcome, r.renewal]).sort()).toEqual(
        [
          [a.domain, zone, 'issued', 0],
          [b.domain, zone, 'issued', 0],
        ].sort(),
      );

      await mirror.flush();
      const serials = new Set<string>();
      for (const site of [a, b]) {
        expect(
          standin
            .records()
            .filter((r) => r.type === 'A' && r.name === site.domain)
            .map((r) => r.value),
        ).toEqual(['127.0.0.1']);
        expect(await addresses(site.domain)).toEqual(['127.0.0.1']);
        const served = await servedCertificate(site.domain);
        expect(served.names).toEqual([site.domain]);
        serials.add(served.serial);
        expect(await httpsGet(site.domain, ctx.roots.letsencrypt)).toMatchObject({ exit: 0, status: 200 });
      }
      expect(serials.size).toBe(2);
      // On the server: one directory per site, whose key belongs to a certificate naming that site
      // only — no key there serves the other site's name, and no wildcard of the zone is installed.
      const installed = installedInZone(zone);
      expect(installed.map((i) => i.dir).sort()).toEqual([a.domain, b.domain].sort());
      for (const { dir, names, keyMatches } of installed) {
        expect(names).toEqual([dir]);
        expect(keyMatches).toBe(true);
        expect(names.some((n) => n.startsWith('*.'))).toBe(false);
      }
    }, 150_000);

    it('a site still on the former shared zone wildcard leaves it at its next ssl run, and the wildcard row goes', async () => {
      const [, kept] = sites as [string, string];
      // As a site created before per-name certificates: its deployment names the zone's row.
      const now = new Date().toISOString();
      await suite.storage.db
        .insertInto('certificates')
        .values({
          uuid: '00000000-0000-4000-8000-00000000000f',
          scope: `zone:${zone}`,
          owner: 'siteplane',
          directory_url: 'https://127.0.0.1:14000/dir',
          domains: JSON.stringify([`*.${zone}`]),
          material_enc: null,
          serial: null,
          not_before: null,
          expires_at: null,
          lock_until: null,
          locked_by: null,
          next_attempt_at: null,
          last_error: null,
          created_at: now,
          updated_at: now,
        })
        .execute();
      await suite.storage.db
        .updateTable('site_certificates')
        .set({ certificate_uuid: '00000000-0000-4000-8000-00000000000f' })
        .where('site_uuid', '=', kept)
        .execute();
      const retry = await suite.api('POST', `/api/v1/sites/${kept}/ssl`);
      expect(retry.status, JSON.stringify(retry.body)).toBe(202);
      const { op, site } = await certificateOutcome(suite, kept, 90_000);
      expect(op.status, logOf(op)).toBe('succeeded');
      expect(logOf(op)).toContain('no site uses the former zone wildcard any more: its key is dropped');
      expect(site.ssl).toMatchObject({ status: 'active', error: null });
      expect(
        await suite.storage.db.selectFrom('certificates').select('scope').where('scope', 'like', 'zone:%').execute(),
      ).toEqual([]);
    }, 120_000);

    it('deleting a temporary site removes its A record and certificate; the other keeps its own; the budget is not refilled', async () => {
      const [gone, kept] = sites as [string, string];
      const goneDomain = (await suite.api('GET', `/api/v1/sites/${gone}`)).body.domain as string;
      const keptDomain = (await suite.api('GET', `/api/v1/sites/${kept}`)).body.domain as string;
      expect(await deleteSites(suite, [gone])).toEqual([]);
      sites.splice(sites.indexOf(gone), 1);
      await mirror.flush();
      expect(standin.records().filter((r) => r.name === goneDomain)).toEqual([]);
      expect(await addresses(goneDomain)).toEqual([]);
      expect(await httpsGet(keptDomain, ctx.roots.letsencrypt)).toMatchObject({ exit: 0, status: 200 });
      expect((await servedCertificate(keptDomain)).names).toEqual([keptDomain]);
      expect(await suite.storage.db.selectFrom('certificates').select('scope').execute()).toEqual([{ scope: `site:${kept}` }]);
      expect(installedInZone(zone).map((i) => i.dir)).toEqual([keptDomain]);
      expect(await suite.storage.db.selectFrom('free_domain_issuances').select('name').execute()).toHaveLength(2);
    }, 90_000);
  });
}
