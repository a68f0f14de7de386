import type { Http01Hooks } from '../../../tls/challenge-hooks.js';
import type { StepContext } from '../../step.js';
import { StepError } from '../commands.js';
import { makeDirectories, ROOT_FILE, removeFile, writeFile } from '../remote-files.js';
import { ACME_ROOT, siteLayout } from '../site-layout.js';

const ROOT_DIRECTORY = { owner: 'root', group: 'root', mode: '0755' };

/** ACME tokens are base64url (RFC 8555 §8.1); anything else never becomes a path. */
const TOKEN = /^[A-Za-z0-9_-]{16,128}$/;

function checkToken(token: string): string {
  if (!TOKEN.test(token)) throw new StepError(`the CA sent a challenge token that is not base64url: ${JSON.stringify(token)}`);
  return token;
}

/**
 * HTTP-01 answered by the site's own nginx: every vhost serves /.well-known/acme-challenge/ from
 * the site's ACME directory (templates/nginx-vhost.ts), on port 80 whether TLS is on or not, so
 * the token file is all a challenge needs. Files are root's, readable by nginx.
 */
export function serverHttp01Hooks(ctx: StepContext): Http01Hooks {
  const { acmeDir } = siteLayout(ctx.site);
  const dir = `${acmeDir}/.well-known/acme-challenge`;
  // Every level named, parents first, so each is root's and 0755 whatever the umask: nginx
  // (www-data) reads the token through all of them.
  const levels = ['/var/lib/siteplane', ACME_ROOT, acmeDir, `${acmeDir}/.well-known`, dir];
  return {
    async publish(token, keyAuthorization) {
      const file = `${dir}/${checkToken(token)}`;
      await makeDirectories(ctx, levels, ROOT_DIRECTORY);
      await writeFile(ctx, file, keyAuthorization, ROOT_FILE);
    },
    async remove(token) {
      await removeFile(ctx, `${dir}/${checkToken(token)}`);
    },
  };
}
