// Issue 4 item 3 and "done when": a wildcard site through each DNS provider's adapter (its API
// stand-in, mirrored into the mock DNS), and provider errors as clear messages in the site record.
import { describe, expect, it } from 'vitest';
import type { DnsProviderName } from '../../../src/dns/provider.js';
import { ctx } from './support/context.js';
import { httpGet, httpsGet, servedCertificate } from './support/https.js';
import { certificateOutcome, createSite, logOf, tlsSite } from './support/sites.js';

const wildcardSite = (provider: DnsProviderName, domain: string, profile: string, includeWww: boolean) => ({
  ...tlsSite(ctx.ids, domain),
  wildcard: true,
  dnsProfile: { uuid: profile, provider },
  includeWwwSslCert: includeWww,
});

export function wildcardCases(): void {
  describe('wildcard, DNS-01 through the site’s DNS profile (spec §2.3, §4.1 rule 4)', () => {
    const cases: [DnsProviderName, boolean][] = [
      ['cloudflare', true],
      ['digitalocean', false],
      ['porkbun', false],
      ['aws', true],
    ];
    for (const [provider, includeWww] of cases) {
      it(`${provider}: *.domain + domain${includeWww ? ' + www' : ''}, any subdomain served over HTTPS, TXT records removed`, async () => {
        const domain = `app.${ctx.zones[provider]}`;
        const { uuid } = await createSite(ctx.suite, wildcardSite(provider, domain, ctx.profiles[provider], includeWww));
        const { op, site } = await certificateOutcome(ctx.suite, uuid);
        expect(op.status, logOf(op)).toBe('succeeded');
        expect(site).toMatchObject({ status: 'installed', ssl: { status: 'active', wildcard: true, include_www: includeWww } });
        expect(logOf(op)).toContain(`Checking the credentials of DNS profile "${provider} stand-in" (${provider})`);
        expect(logOf(op)).toContain(`*.${domain} validated`);

        const names = [`*.${domain}`, domain, ...(includeWww ? [`www.${domain}`] : [])];
        expect((await servedCertificate(domain)).names.sort()).toEqual(names.sort());
        for (const name of [domain, `shop.${domain}`, `www.${domain}`]) {
          const answer = await httpsGet(name, ctx.roots.letsencrypt);
          expect(answer, `${name}: ${answer.stderr}`).toMatchObject({ exit: 0, status: 200 });
        }
        await ctx.mirrors[provider].flush();
        expect(ctx.standins[provider].records().filter((r) => r.type === 'TXT')).toEqual([]);
      }, 90_000);
    }
  });

  describe('DNS provider errors in the site record; the site stays on HTTP', () => {
    it('rejected credentials name the profile and what to do, and nothing is ordered', async () => {
      const profile = await ctx.suite.api('POST', '/api/v1/dns-profiles', {
        provider: 'cloudflare',
        name: 'expired token',
        credentials: { apiToken: 'revoked-token-123456' },
      });
      const domain = `creds.${ctx.zones.cloudflare}`;
      const { uuid } = await createSite(ctx.suite, wildcardSite('cloudflare', domain, profile.body.uuid, false));
      const { op, site } = await certificateOutcome(ctx.suite, uuid);
      expect(op.status).toBe('failed');
      expect(site.status).toBe('installed');
      expect(site.ssl.status).toBe('failed');
      expect(site.ssl.error).toMatchObject({ code: 'dns_provider_failed', operation: op.uuid });
      expect(site.ssl.error.message).toBe(
        'The provider rejected the credentials of the DNS profile "expired token" (cloudflare): cloudflare: Invalid API Token (1000) (HTTP 401). ' +
          "Update the profile's credentials, then retry (POST /api/v1/sites/<uuid>/ssl).",
      );
      expect(site.ssl.error.message).not.toContain('revoked-token-123456');
      expect(logOf(op)).not.toContain('Ordering a certificate');
      expect(await httpGet(domain)).toMatchObject({ status: 200 });
    }, 60_000);

    it('a rate limit says when to try again', async () => {
      const domain = `limited.${ctx.zones.digitalocean}`;
      ctx.standins.digitalocean.rateLimit(1, 1800);
      const { uuid } = await createSite(ctx.suite, wildcardSite('digitalocean', domain, ctx.profiles.digitalocean, false));
      const { site } = await certificateOutcome(ctx.suite, uuid);
      expect(site.status).toBe('installed');
      expect(site.ssl).toMatchObject({ status: 'failed', error: { code: 'rate_limited', retry_after_seconds: 1800 } });
      expect(site.ssl.error.message).toMatch(
        /^The DNS provider of the DNS profile "digitalocean stand-in" \(digitalocean\) is rate-limiting Siteplane \(.+\); try again in 1800 s\.$/,
      );
      expect(await httpGet(domain)).toMatchObject({ status: 200 });
    }, 60_000);
  });
}
