/**
 * What TLS adds to a site's operations (jobs/site-job.ts calls it):
 *
 * - create: in the owned-zone mode, the temporary domain's A record first; when the site is
 *   installed, an `ssl` operation is queued in the same transaction.
 * - ssl: obtain (reuse, or order from the CA), install cert + key, switch the vhost to TLS, check
 *   nginx serves it, record.
 *   A separate operation rather than a step of create, so a certificate failure — DNS not pointing
 *   yet, a CA rate limit — never fails the site: it stays `installed` and served over HTTP, the
 *   reason is in `ssl.error`, and the same operation is what a retry and a renewal run.
 * - delete: the DNS records before the recipe's removal, the stored certificate rows after it.
 */
import type { Kysely } from 'kysely';
import type { SiteJobExtension } from '../../jobs/site-job.js';
import type { Step, StepContext } from '../../provisioning/step.js';
import { StepError } from '../../provisioning/steps/commands.js';
import { serverHttp01Hooks } from '../../provisioning/steps/tls/http01-hooks.js';
import { ensureTlsVhost, installCertificate } from '../../provisioning/steps/tls/install-certificate.js';
import { checkServedCertificate } from '../../provisioning/steps/tls/served-certificate.js';
import type { Database } from '../../storage/schema.js';
import { inFreeZone, planCertificate } from '../../tls/certificate-plan.js';
import { CertificateStore, type StoredCertificate } from './certificate-store.js';
import { enqueueSsl } from './enqueue-ssl.js';
import { ensureFreeDomainRecord, removeDnsRecords, serverAddresses } from './free-domain-records.js';
import { obtainCertificate, type SslReason } from './obtain-certificate.js';
import { parseSsl, type StoredSsl, updateSiteSsl } from './site-ssl-state.js';
import { sslError } from './ssl-failure.js';
import type { SslDeps } from './tls-settings.js';

type SiteRow = Database['sites'];

export interface SiteTlsDeps extends SslDeps {
  /** The site list cache of the server is stale after an ssl status change. */
  siteChanged(serverUuid: string): void;
}

const step = (name: string, run: (ctx: StepContext) => Promise<void>): Step => ({ name, run });

export function siteTls(deps: SiteTlsDeps): SiteJobExtension {
  const store = new CertificateStore(deps.db, deps.secrets);
  const zone = deps.settings.freeZone;
  const forSite = (site: SiteRow, ssl: StoredSsl) =>
    planCertificate(
      {
        uuid: site.uuid,
        teamUuid: site.team_uuid,
        domain: site.domain,
        freeDomain: site.free_domain === 1,
        ssl: {
          provider: ssl.provider,
          email: ssl.email,
          wildcard: ssl.wildcard,
          includeWww: ssl.include_www,
          dnsProfile: ssl.dns_profile,
        },
      },
      zone,
    );

  function sslSteps(op: Database['operations'], site: SiteRow, server: Database['servers']): Step[] {
    const reason = (JSON.parse(op.params) as { reason?: SslReason }).reason ?? 'issue';
    const state: { certificate: StoredCertificate | null } = { certificate: null };
    const install = { filesChanged: false };
    const material = () => state.certificate;
    return [
      step('obtain certificate', async (ctx) => {
        const ssl = parseSsl(site.ssl);
        if (!ssl.enabled) return ctx.log('the site has no TLS (ssl false): nothing to do');
        if (site.status === 'deleting') return ctx.log('the site is being deleted: no certificate');
        if (site.status !== 'installed') {
          throw new StepError(`the site is ${site.status}; its certificate is requested once it is installed`);
        }
        const plan = forSite(site, ssl);
        if (ctx.exec.kind === 'dry-run') {
          return ctx.log(
            `dry-run server: would order ${plan.names.join(', ')} from ${deps.settings.directories[plan.ca]} (${plan.challenge}); nothing is requested`,
          );
        }
        await updateSiteSsl(deps.db, site.uuid, { status: 'issuing' }, deps.clock.now());
        deps.siteChanged(site.server_uuid);
        const obtained = await obtainCertificate(deps, {
          plan,
          reason,
          holder: op.uuid,
          ...(plan.challenge === 'http-01' ? { http01: serverHttp01Hooks(ctx) } : {}),
          serverAddresses: plan.challenge === 'http-01' ? await serverAddresses(server.ip) : [],
          log: (line) => ctx.log(line),
        });
        state.certificate = obtained.certificate;
      }),
      installCertificate(material, install),
      ensureTlsVhost(material, install),
      checkServedCertificate(material),
      step('record certificate', async (ctx) => {
        const certificate = state.certificate;
        if (!certificate) return;
        const now = deps.clock.now();
        await store.recordDeployment(site.uuid, certificate, now);
        // A temporary site that had the shared zone wildcard has its own certificate now.
        if (await store.dropUnusedZoneCertificates())
          ctx.log('no site uses the former zone wildcard any more: its key is dropped');
        await updateSiteSsl(
          deps.db,
          site.uuid,
          { status: 'active', expires_at: certificate.expiresAt.toISOString(), error: null },
          now,
        );
        deps.siteChanged(site.server_uuid);
        ctx.log(`the site is served over HTTPS until ${certificate.expiresAt.toISOString()} (serial ${certificate.serial})`);
      }),
    ];
  }

  return {
    steps({ op, site, server }, recipeSteps) {
      if (op.kind === 'ssl') return sslSteps(op, site, server);
      if (op.kind === 'create' && zone && inFreeZone({ domain: site.domain, freeDomain: site.free_domain === 1 }, zone)) {
        return [ensureFreeDomainRecord(deps, zone, server.ip), ...recipeSteps];
      }
      if (op.kind === 'delete') {
        // DNS first: when the provider fails, the deletion stops with the site still whole on its
        // server; the stored certificate rows go last, once everything else is gone.
        return [removeDnsRecords(deps), ...recipeSteps, step('forget certificate', () => store.forgetSite(site.uuid))];
      }
      return recipeSteps;
    },

    async created(trx: Kysely<Database>, site: SiteRow, now: string) {
      if (parseSsl(site.ssl).enabled) await enqueueSsl(trx, site, 'issue', now);
    },

    async sslFailed(trx, op, site, error) {
      const now = deps.clock.now();
      // In the transaction that fails the operation (jobs/operation-outcome.ts): read and write through it.
      const deployed = await new CertificateStore(trx, deps.secrets).deployment(site.uuid);
      // A renewal that failed while the deployed certificate still works leaves the site on
      // HTTPS: `active`, with the reason in `error`; otherwise the site stays on HTTP, `failed`.
      const stillValid = deployed !== undefined && new Date(deployed.expires_at) > now;
      await updateSiteSsl(
        trx,
        site.uuid,
        { status: stillValid ? 'active' : 'failed', error: sslError(error, op.uuid, now) },
        now,
      );
    },
  };
}
