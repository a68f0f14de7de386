import type { Http01Hooks } from '../../../tls/challenge-hooks.js';
import type { StepContext } from '../../step.js';
import { AS_ROOT, mustRun, StepError } from '../commands.js';
import { ROOT_FILE, removeFile, writeFile } from '../remote-files.js';
import { siteLayout } from '../site-layout.js';

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
  const dir = `${siteLayout(ctx.site).acmeDir}/.well-known/acme-challenge`;
  return {
    async publish(token, keyAuthorization) {
      const file = `${dir}/${checkToken(token)}`;
      await mustRun(ctx, ['install', '-d', '-m', '0755', dir], AS_ROOT, `create ${dir}`);
      await writeFile(ctx, file, keyAuthorization, ROOT_FILE);
    },
    async remove(token) {
      await removeFile(ctx, `${dir}/${checkToken(token)}`);
    },
  };
}
