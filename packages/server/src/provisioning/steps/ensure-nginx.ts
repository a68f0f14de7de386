import type { Step, StepContext } from '../step.js';
import { ensurePackages } from './apt.js';
import { installConfigFile } from './config-file.js';
import { fileHash, ROOT_FILE, readFile, sha256 } from './remote-files.js';
import { livePid, NGINX_PID_FILE, reloadNginx, testNginx } from './services.js';

/** Server-wide nginx settings Siteplane's vhosts rely on. */
export const NGINX_SNIPPET = '/etc/nginx/conf.d/siteplane.conf';
const SNIPPET_CONTENT = '# Managed by Siteplane: room for long server names.\nserver_names_hash_bucket_size 256;\n';

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
      let changed = installed.length > 0;
      // In place already (every site after the first): nginx.conf need not be read again.
      const inPlace = (await fileHash(ctx, NGINX_SNIPPET)) === sha256(SNIPPET_CONTENT);
      const main = inPlace ? '' : ((await readFile(ctx, '/etc/nginx/nginx.conf')) ?? '');
      if (!inPlace && !/^\s*server_names_hash_bucket_size\s/m.test(main)) {
        const change = await ctx.withServerLock('nginx', () =>
          installConfigFile(ctx, {
            path: NGINX_SNIPPET,
            content: SNIPPET_CONTENT,
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
