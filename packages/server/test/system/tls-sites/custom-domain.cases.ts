// Issue 4 items 2-4 and "done when": a custom-domain site answering over HTTPS with a valid chain,
// HTTP-01 answered by its own nginx; ZeroSSL-style EAB; DNS not pointing reported, HTTP kept,
// then fixed and retried; removal of the certificate with the site.
import { existsSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { mockDns } from '../tls/pebble.js';
import { ctx } from './support/context.js';
import { holdHttp01Port } from './support/forwarder.js';
import { httpGet, httpsGet } from './support/https.js';
import { certificateOutcome, createSite, deleteSites, logOf, tlsSite } from './support/sites.js';

const CERTIFICATES = '/etc/siteplane/certificates';

export function customDomainCases(): void {
  describe('custom domain, HTTP-01 (spec §2.1 ssl, sslProvider)', () => {
    holdHttp01Port();

    it('Let’s Encrypt: HTTPS with a valid chain, HTTP redirected, key 0600, secrets sealed in the database', async () => {
      const domain = `shop-${ctx.run}.test`;
      await mockDns.addA(domain, ['127.0.0.1']);
      const { uuid } = await createSite(ctx.suite, tlsSite(ctx.ids, domain));
      const { op, site } = await certificateOutcome(ctx.suite, uuid);
      expect(op.status, logOf(op)).toBe('succeeded');
      expect(site).toMatchObject({ status: 'installed', ssl: { status: 'active', error: null } });
      expect(logOf(op)).toContain(`${domain} validated`);

      const https = await httpsGet(domain, ctx.roots.letsencrypt);
      expect(https, https.stderr).toMatchObject({ exit: 0, status: 200 });
      expect(https.body).toContain(`${domain} is ready`);
      expect(await httpGet(domain)).toMatchObject({ status: 301, location: `https://${domain}/` });
      // …except challenges: port 80 still answers HTTP-01, which renewals need.
      const probe = `/var/lib/siteplane/acme/${domain}/.well-known/acme-challenge/probe-${ctx.run}`;
      writeFileSync(probe, 'probe');
      try {
        expect(await httpGet(domain, `/.well-known/acme-challenge/probe-${ctx.run}`)).toMatchObject({
          status: 200,
          body: 'probe',
        });
      } finally {
        rmSync(probe);
      }

      expect(statSync(`${CERTIFICATES}/${domain}/current/privkey.pem`).mode & 0o777).toBe(0o600);
      expect(statSync(`${CERTIFICATES}/${domain}`).mode & 0o777).toBe(0o700);
      // The HTTP-01 token was taken down again.
      const tokens = `/var/lib/siteplane/acme/${domain}/.well-known/acme-challenge`;
      expect(existsSync(tokens) ? readdirSync(tokens) : []).toEqual([]);

      const row = await ctx.suite.storage.db
        .selectFrom('certificates')
        .selectAll()
        .where('scope', '=', `site:${uuid}`)
        .executeTakeFirstOrThrow();
      expect(row.material_enc).toMatch(/^v1\./);
      expect(row.material_enc).not.toContain('PRIVATE');
      expect(site.ssl.expires_at).toBe(row.expires_at);
      const account = await ctx.suite.storage.db.selectFrom('acme_accounts').selectAll().where('owner', '=', row.owner).execute();
      expect(account.map((a) => a.account_url)).toEqual([expect.stringMatching(/^https:\/\/127\.0\.0\.1:14000\//)]);
      expect(account[0]?.key_enc).toMatch(/^v1\./);
    }, 90_000);

    it('ZeroSSL (Pebble with external account binding): its own account, a chain to its own root', async () => {
      const domain = `zs-${ctx.run}.test`;
      await mockDns.addA(domain, ['127.0.0.1']);
      const { uuid } = await createSite(ctx.suite, tlsSite(ctx.ids, domain, 'zerossl'));
      const { op, site } = await certificateOutcome(ctx.suite, uuid);
      expect(op.status, logOf(op)).toBe('succeeded');
      expect(site.ssl).toMatchObject({ provider: 'zerossl', status: 'active' });
      expect(await httpsGet(domain, ctx.roots.zerossl)).toMatchObject({ exit: 0, status: 200 });
      // Not issued by the other CA: its root does not verify this chain.
      expect((await httpsGet(domain, ctx.roots.letsencrypt)).exit).toBe(60);
      const accounts = await ctx.suite.storage.db.selectFrom('acme_accounts').select('account_url').execute();
      expect(accounts.map((a) => a.account_url)).toContainEqual(expect.stringMatching(/^https:\/\/127\.0\.0\.1:14001\//));
    }, 90_000);

    it('DNS not pointing: the reason in the site record, HTTP still served; fixed DNS + POST …/ssl issues', async () => {
      const domain = `moved-${ctx.run}.test`;
      await mockDns.addA(domain, ['127.0.0.2']);
      const { uuid } = await createSite(ctx.suite, tlsSite(ctx.ids, domain));
      const failed = await certificateOutcome(ctx.suite, uuid);
      expect(failed.op.status).toBe('failed');
      expect(failed.site.status).toBe('installed');
      expect(failed.site.ssl).toMatchObject({
        status: 'failed',
        expires_at: null,
        error: {
          code: 'dns_not_pointing',
          message:
            `${domain} does not point to this server: it resolves to 127.0.0.2, expected 127.0.0.1. ` +
            'Change its A/AAAA records to 127.0.0.1 (remove 127.0.0.2), wait for DNS to update, then try again.',
        },
      });
      const http = await httpGet(domain);
      expect(http).toMatchObject({ status: 200 });
      expect(http.body).toContain(`${domain} is ready`);

      await mockDns.clearA(domain);
      await mockDns.addA(domain, ['127.0.0.1']);
      const retry = await ctx.suite.api('POST', `/api/v1/sites/${uuid}/ssl`);
      expect(retry.status).toBe(202);
      const fixed = await certificateOutcome(ctx.suite, uuid);
      expect(fixed.op.uuid).toBe(retry.body.operation.uuid);
      expect(fixed.site.ssl).toMatchObject({ status: 'active', error: null });
      expect(await httpsGet(domain, ctx.roots.letsencrypt)).toMatchObject({ exit: 0, status: 200 });

      // Deleting the site takes its certificate and vhost off the server.
      expect(await deleteSites(ctx.suite, [uuid])).toEqual([]);
      expect(existsSync(`${CERTIFICATES}/${domain}`)).toBe(false);
      expect(existsSync(`/etc/nginx/sites-enabled/${domain}.conf`)).toBe(false);
    }, 120_000);
  });
}
