import type { StepContext } from '../step.js';
import { StepError } from '../steps/commands.js';
import { ensureNginxVhost, renderSiteVhost, type VhostOptions } from '../steps/ensure-nginx-vhost.js';
import { readFile } from '../steps/remote-files.js';
import { siteLayout } from '../steps/site-layout.js';

/**
 * The site's vhost brought up to Siteplane's current template at each deploy (before the switch;
 * Generic Port's stand-in writes its vhost anyway), so that what the template gained since the
 * site was made (its `disable_symlinks`, which keeps one site user from having nginx serve
 * another's files) reaches sites made before. The
 * vhost keeps its form: the certificate files it names stay (a site without them stays on port 80).
 * One round trip (the read) when it is up to date. A vhost nginx refuses is left as it was (config-file.ts
 * restores it) and the deploy goes on: the site served before and still does.
 */
export async function refreshVhost(ctx: StepContext): Promise<void> {
  const vhost = await vhostOnServer(ctx);
  if (vhost === null) return;
  if (vhost.text === renderSiteVhost(ctx.site, vhost.options)) return;
  try {
    await ensureNginxVhost(vhost.options).run(ctx);
  } catch (error) {
    if (!(error instanceof StepError)) throw error;
    ctx.log(`the vhost was left as it was: ${error.message}`);
  }
}

/**
 * The site's vhost as it is on the server, and the options that render it in its form (the
 * certificate files it names); null, logged, when there is none.
 */
export async function vhostOnServer(ctx: StepContext): Promise<{ text: string; options: VhostOptions } | null> {
  const layout = siteLayout(ctx.site);
  const text = await readFile(ctx, layout.vhost);
  if (text === null) {
    ctx.log(`no vhost at ${layout.vhost}: a retry of the site makes it`);
    return null;
  }
  const certificate = /^\s*ssl_certificate\s+(\S+);/m.exec(text)?.[1];
  const key = /^\s*ssl_certificate_key\s+(\S+);/m.exec(text)?.[1];
  return { text, options: certificate && key ? { tls: { certificate, key } } : {} };
}
