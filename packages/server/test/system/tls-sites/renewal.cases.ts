// Issue 4 item 4: renewal 30 days before expiry, driven by moving the service's clock; the
// renewed files are what nginx serves afterwards. Runs last in the suite: the clock stays moved.
import { describe, expect, it } from 'vitest';
import { settle } from '../../tls/support.js';
import { mockDns } from '../tls/pebble.js';
import { ctx } from './support/context.js';
import { holdHttp01Port } from './support/forwarder.js';
import { httpsGet, servedCertificate } from './support/https.js';
import { certificateOutcome, createSite, logOf, tlsSite } from './support/sites.js';

const DAY = 86_400_000;

export function renewalCases(): void {
  describe('renewal (tls/renewal.ts: 30 days before expiry)', () => {
    holdHttp01Port();

    it('is not queued early; 29 days before expiry the scheduler renews and nginx serves the new certificate', async () => {
      const domain = `renew-${ctx.run}.test`;
      await mockDns.addA(domain, ['127.0.0.1']);
      const { uuid } = await createSite(ctx.suite, tlsSite(ctx.ids, domain));
      const first = await certificateOutcome(ctx.suite, uuid);
      expect(first.op.status, logOf(first.op)).toBe('succeeded');
      const before = await servedCertificate(domain);
      const expiresAt = new Date(first.site.ssl.expires_at as string);
      const renewals = ctx.suite.service.renewals;
      if (!renewals) throw new Error('the suite runs a worker, so it has a renewal scheduler');

      await settle(ctx.suite);
      expect(await renewals.tick()).toEqual([]);
      ctx.suite.clock.set(new Date(expiresAt.getTime() - 31 * DAY));
      expect(await renewals.tick()).toEqual([]);

      await settle(ctx.suite);
      ctx.suite.clock.set(new Date(expiresAt.getTime() - 29 * DAY));
      // Every certificate the suite got is about as old: all are renewed now, side by side on one
      // server (which is how a key/chain mix-up between concurrent renewals would show).
      const due = await renewals.tick();
      expect(due).toContain(uuid);
      const outcomes = await Promise.all(due.map((site) => certificateOutcome(ctx.suite, site, 120_000)));
      for (const { op } of outcomes) expect(op.status, logOf(op)).toBe('succeeded');
      const renewed = outcomes[due.indexOf(uuid)] as (typeof outcomes)[number];
      expect(logOf(renewed.op)).toMatch(/is due \(expiring\); ordering a new one/);

      const after = await servedCertificate(domain);
      expect(after.serial).not.toBe(before.serial);
      expect(renewed.site.ssl).toMatchObject({ status: 'active', error: null });
      expect(new Date(renewed.site.ssl.expires_at as string).getTime()).toBeGreaterThanOrEqual(expiresAt.getTime());
      const deployed = await ctx.suite.storage.db
        .selectFrom('site_certificates')
        .selectAll()
        .where('site_uuid', '=', uuid)
        .executeTakeFirstOrThrow();
      expect(deployed.serial.replace(/^0+/, '')).toBe(after.serial.replace(/^0+/, ''));
      expect(await httpsGet(domain, ctx.roots.letsencrypt)).toMatchObject({ exit: 0, status: 200 });
    }, 180_000);
  });
}
