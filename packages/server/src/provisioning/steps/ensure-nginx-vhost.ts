import type { Step, StepContext } from '../step.js';
import { renderNginxVhost } from '../templates/nginx-vhost.js';
import { AS_ROOT, mustRun } from './commands.js';
import { ConfigTestFailed, installConfigFile } from './config-file.js';
import { claim } from './ledger.js';
import { linkTarget, pathKind, ROOT_FILE, removeFile } from './remote-files.js';
import { reloadNginx, testNginx } from './services.js';
import { siteLayout } from './site-layout.js';
import { serverNames, vhostBackend } from './vhost-backend.js';

export interface VhostOptions {
  /** Certificate files; the TLS module passes them once a certificate is issued. */
  tls?: { certificate: string; key: string };
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
      const content = renderNginxVhost({
        serverNames: serverNames(ctx.site),
        acmeRoot: layout.acmeDir,
        accessLog: layout.accessLog,
        errorLog: layout.errorLog,
        backend: vhostBackend(ctx.site),
        ...(options.tls ? { tls: options.tls } : {}),
      });
      await ctx.withServerLock('nginx', async () => {
        await claim(
          ctx,
          {
            kind: 'nginx_vhost',
            ref: layout.vhost,
            details: { enabled: layout.vhostEnabled, logs: [layout.accessLog, layout.errorLog] },
          },
          (await pathKind(ctx, layout.vhost)) !== null,
          'nginx vhost',
        );
        const isEnabled = async () => (await linkTarget(ctx, layout.vhostEnabled)) === layout.vhost;
        let linked = false;
        const enable = async () => {
          if (await isEnabled()) return;
          await mustRun(ctx, ['ln', '-s', '-f', '-n', '--', layout.vhost, layout.vhostEnabled], AS_ROOT, 'enable the vhost');
          linked = true;
        };
        const disable = async () => {
          if (linked) await removeFile(ctx, layout.vhostEnabled);
        };
        let change = await installConfigFile(ctx, {
          path: layout.vhost,
          content,
          ownership: ROOT_FILE,
          test: () => testNginx(ctx),
          activate: enable,
          deactivate: disable,
        });
        if (change === 'unchanged' && !(await isEnabled())) {
          // The file was right but not enabled (a job stopped in between): enable, test, or undo.
          await enable();
          const test = await testNginx(ctx);
          if (test.code !== 0) {
            await disable();
            throw new ConfigTestFailed(layout.vhost, test);
          }
          change = 'updated';
        }
        if (change === 'unchanged') {
          ctx.log(`nginx vhost ${layout.vhost} is in place`);
          return;
        }
        ctx.log(`${change === 'created' ? 'created' : 'updated'} nginx vhost ${layout.vhost} and enabled it`);
        await reloadNginx(ctx);
      });
    },
  };
}
