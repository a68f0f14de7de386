import { describe, expect, it } from 'vitest';
import { refreshVhost } from '../../src/provisioning/deploy/refresh-vhost.js';
import { DryRunExecutor } from '../../src/provisioning/executors/dry-run.js';
import { renderSiteVhost } from '../../src/provisioning/steps/ensure-nginx-vhost.js';
import { siteLayout } from '../../src/provisioning/steps/site-layout.js';
import { makeContext } from './support/context.js';
import { siteOf } from './support/sites.js';

/**
 * A deploy brings the site's vhost up to the current template (refresh-vhost.ts): sites made before
 * a directive was added (disable_symlinks) get it, in the form their vhost has (TLS or not).
 */
const site = siteOf('static-html');
const { vhost } = siteLayout(site);
const tls = {
  certificate: '/etc/siteplane/tls/static-html.example.com/fullchain.pem',
  key: '/etc/siteplane/tls/static-html.example.com/key.pem',
};
const older = (text: string) => text.replace(/^.*disable_symlinks.*\n/m, '');

function serverWith(vhostText: string | null) {
  const lines: string[] = [];
  const exec = new DryRunExecutor({ onCommand: (line) => lines.push(line) });
  exec.answer((argv) => argv[0] === 'cat' && argv[2] === vhost, vhostText === null ? { code: 1 } : { stdout: vhostText });
  return { exec, lines };
}

describe('the vhost refreshed at a deploy', () => {
  it('an older TLS vhost is written again in its TLS form, with the certificate files it named', async () => {
    const { exec, lines } = serverWith(older(renderSiteVhost(site, { tls })));
    const ctx = makeContext(exec, site);
    await refreshVhost(ctx);
    // The file goes on stdin (the dry run records its size): the current template's TLS form, byte for byte in length.
    const expected = Buffer.byteLength(renderSiteVhost(site, { tls }), 'utf8');
    expect(lines.some((line) => line.includes(`<redacted ${expected} bytes>`))).toBe(true);
    expect(renderSiteVhost(site, { tls })).toContain(`ssl_certificate ${tls.certificate};`);
  });

  it('an older plain vhost is written again without TLS', async () => {
    const { exec, lines } = serverWith(older(renderSiteVhost(site)));
    await refreshVhost(makeContext(exec, site));
    expect(lines.some((line) => line.includes(`<redacted ${Buffer.byteLength(renderSiteVhost(site), 'utf8')} bytes>`))).toBe(
      true,
    );
  });

  it('an up-to-date vhost costs the one read; a missing one is left to a retry', async () => {
    const current = serverWith(renderSiteVhost(site, { tls }));
    await refreshVhost(makeContext(current.exec, site));
    expect(current.lines).toHaveLength(1);
    const missing = serverWith(null);
    const ctx = makeContext(missing.exec, site);
    await refreshVhost(ctx);
    expect(missing.lines).toHaveLength(1);
    expect(ctx.logs.join('\n')).toContain(`no vhost at ${vhost}`);
  });
});
