import type { ProvisionedSite, Step, StepContext } from '../step.js';
import { renderNginxVhost } from '../templates/nginx-vhost.js';
import { installConfigFile } from './config-file.js';
import { claim } from './ledger.js';
import { hashOf, kindOf, linkOf, probe } from './probe.js';
import { ROOT_FILE, sha256 } from './remote-files.js';
import { NGINX_TEST } from './services.js';
import { siteLayout } from './site-layout.js';
import { serverNames, vhostBackend } from './vhost-backend.js';

export interface VhostOptions {
  /** Certificate files; the TLS module passes them once a certificate is issued. */
  tls?: { certificate: string; key: string };
  /** A process site's stand-in port, only while a deploy restarts its process (deploy/stand-in.ts). */
  standIn?: number;
}

/**
 * sites-available/<domain>.conf, enabled by a symlink in sites-enabled, tested with `nginx -t`
 * before nginx reloads (a failed test restores the previous file, see config-file.ts).
 */
export function ensureNginxVhost(options: VhostOptions = {}): Step {
  return {
    name: 'ensure nginx vhost',
    async run(ctx: StepContext) {
      const layout = siteLayout(ctx.site);
      const content = renderSiteVhost(ctx.site, options);
      await ctx.withServerLock('nginx', async () => {
        // What is there, in one round trip: a second run of the step ends here.
        const [kind, hash, enabledTarget] = await probe(ctx, [
          kindOf(layout.vhost),
          hashOf(layout.vhost),
          linkOf(layout.vhostEnabled),
        ]);
        await claim(
          ctx,
          {
            kind: 'nginx_vhost',
            ref: layout.vhost,
            details: { enabled: layout.vhostEnabled, logs: [layout.accessLog, layout.errorLog] },
          },
          kind !== null,
          'nginx vhost',
        );
        const enabled = enabledTarget === layout.vhost;
        if (enabled && hash === sha256(content)) {
          ctx.log(`nginx vhost ${layout.vhost} is in place`);
          return;
        }
        // Written, enabled, tested and nginx reloaded in one round trip; a failed test removes the
        // link it made and restores the file, and nothing reloads (a vhost that was right but not
        // enabled — a job stopped in between — is only enabled, tested and reloaded).
        const change = await installConfigFile(ctx, {
          path: layout.vhost,
          content,
          ownership: ROOT_FILE,
          test: NGINX_TEST,
          ...(enabled ? {} : { enableLink: layout.vhostEnabled }),
          reloadNginx: true,
        });
        if (change === 'unchanged') return; // made right in between, by an earlier attempt's command
        ctx.log(`${change === 'created' ? 'created' : 'updated'} nginx vhost ${layout.vhost} and enabled it`);
      });
    },
  };
}

/** The site's vhost as Siteplane writes it now. */
export function renderSiteVhost(site: ProvisionedSite, options: VhostOptions = {}): string {
  const layout = siteLayout(site);
  let backend = vhostBackend(site);
  if (options.standIn !== undefined) {
    if (backend.kind !== 'proxy') throw new Error(`${site.type} sites have no process to stand in for`);
    backend = { ...backend, standIn: options.standIn };
  }
  return renderNginxVhost({
    serverNames: serverNames(site),
    acmeRoot: layout.acmeDir,
    accessLog: layout.accessLog,
    errorLog: layout.errorLog,
    backend,
    ...(options.tls ? { tls: options.tls } : {}),
  });
}
