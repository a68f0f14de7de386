import type { Step, StepContext } from '../step.js';
import { ensurePackages } from './apt.js';
import { installConfigFile } from './config-file.js';
import { hashOf, livePidOf, packageInstalled, probe } from './probe.js';
import { ROOT_FILE, readFile, sha256 } from './remote-files.js';
import { NGINX_PID_FILE, NGINX_TEST, reloadNginx } from './services.js';

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
      // One round trip on a server that has it all (every site after the first). Read outside the
      // packages lock: dpkg says "ii" only once an install has finished, so a package seen installed
      // is; one that is not is checked again under the lock by ensurePackages.
      const [present, snippet, pid] = await probe(ctx, [
        packageInstalled('nginx'),
        hashOf(NGINX_SNIPPET),
        livePidOf(NGINX_PID_FILE),
      ]);
      const installed = present ? [] : await ctx.withServerLock('packages', () => ensurePackages(ctx, ['nginx']));
      if (installed.length === 0) ctx.log('nginx is installed');
      let changed = installed.length > 0;
      // In place already: nginx.conf need not be read again. (Installing nginx does not write it.)
      const inPlace = snippet === sha256(SNIPPET_CONTENT);
      const main = inPlace ? '' : ((await readFile(ctx, '/etc/nginx/nginx.conf')) ?? '');
      if (!inPlace && !/^\s*server_names_hash_bucket_size\s/m.test(main)) {
        const change = await ctx.withServerLock('nginx', () =>
          installConfigFile(ctx, {
            path: NGINX_SNIPPET,
            content: SNIPPET_CONTENT,
            ownership: ROOT_FILE,
            test: NGINX_TEST,
          }),
        );
        if (change !== 'unchanged') ctx.log(`wrote ${NGINX_SNIPPET}`);
        changed ||= change !== 'unchanged';
      }
      // An install may have started it (or not: policy-rc.d); a reload starts it either way.
      if (changed || !pid) {
        await ctx.withServerLock('nginx', () => reloadNginx(ctx));
      }
    },
  };
}
