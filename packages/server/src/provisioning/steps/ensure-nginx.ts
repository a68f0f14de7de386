import type { Step, StepContext } from '../step.js';
import { ensurePackages } from './apt.js';
import { installConfigFile } from './config-file.js';
import { ROOT_FILE, readFile } from './remote-files.js';
import { livePid, NGINX_PID_FILE, reloadNginx, testNginx } from './services.js';

/** Server-wide nginx settings Siteplane's vhosts rely on. */
export const NGINX_SNIPPET = '/etc/nginx/conf.d/siteplane.conf';

/**
 * nginx installed and running. Long domain names (up to 253 characters) overflow nginx's default
 * server_names_hash_bucket_size and make `nginx -t` fail, so a snippet raises it — unless the
 * server's nginx.conf sets it already (a duplicate directive is an error too).
 */
export function ensureNginx(): Step {
  return {
    name: 'ensure nginx',
    async run(ctx: StepContext) {
      const installed = await ctx.withServerLock('packages', () => ensurePackages(ctx, ['nginx']));
      if (installed.length === 0) ctx.log('nginx is installed');
      const main = (await readFile(ctx, '/etc/nginx/nginx.conf')) ?? '';
      let changed = installed.length > 0;
      if (!/^\s*server_names_hash_bucket_size\s/m.test(main)) {
        const change = await ctx.withServerLock('nginx', () =>
          installConfigFile(ctx, {
            path: NGINX_SNIPPET,
            content: '# Managed by Siteplane: room for long server names.\nserver_names_hash_bucket_size 256;\n',
            ownership: ROOT_FILE,
            test: () => testNginx(ctx),
          }),
        );
        if (change !== 'unchanged') ctx.log(`wrote ${NGINX_SNIPPET}`);
        changed ||= change !== 'unchanged';
      }
      if (changed || !(await livePid(ctx, NGINX_PID_FILE))) {
        await ctx.withServerLock('nginx', () => reloadNginx(ctx));
      }
    },
  };
}
