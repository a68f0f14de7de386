// Issue 4 item 4 (deployment): certificate files, the TLS vhost and HTTP-01 tokens on a server,
// against the in-memory Debian server the provisioning tests use.
import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { serverHttp01Hooks } from '../../src/provisioning/steps/tls/http01-hooks.js';
import { ensureTlsVhost, installCertificate } from '../../src/provisioning/steps/tls/install-certificate.js';
import { makeContext, runSteps } from '../provisioning/support/context.js';
import { FakeServer } from '../provisioning/support/fake-server.js';
import { siteOf } from '../provisioning/support/sites.js';

const DIR = '/etc/siteplane/certificates/static-html.example.com';
const VHOST = '/etc/nginx/sites-available/static-html.example.com.conf';
const KEY =
  '-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg-secret-part\n-----END PRIVATE KEY-----\n';
const CHAIN =
  '-----BEGIN CERTIFICATE-----\nleaf\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\nintermediate\n-----END CERTIFICATE-----\n';

async function installedSite() {
  const server = new FakeServer();
  const site = siteOf('static-html');
  const ctx = makeContext(server.exec, site);
  await runSteps(ctx, recipeFor('static-html').create(site));
  return { server, site, ctx };
}

const material =
  (fullChainPem = CHAIN, serial = '0A1B2C') =>
  () => ({ fullChainPem, privateKeyPem: KEY, serial, names: ['static-html.example.com'] });

describe('installCertificate', () => {
  it('writes key 0600 and chain 0644 in a 0700 directory per certificate, `current` linked to it, ledgered, the key only on stdin', async () => {
    const { server, ctx } = await installedSite();
    const before = server.calls.length;
    await installCertificate(material()).run(ctx);

    expect(server.fs.get(DIR)).toMatchObject({ type: 'dir', mode: '700', owner: 'root' });
    expect(server.fs.get(`${DIR}/0A1B2C`)).toMatchObject({ type: 'dir', mode: '700', owner: 'root' });
    expect(server.fs.get(`${DIR}/current`)).toMatchObject({ type: 'link', target: '0A1B2C' });
    expect(server.fs.get(`${DIR}/0A1B2C/privkey.pem`)).toMatchObject({ type: 'file', mode: '600', owner: 'root', content: KEY });
    expect(server.fs.get(`${DIR}/0A1B2C/fullchain.pem`)).toMatchObject({ type: 'file', mode: '644', content: CHAIN });
    expect(server.fs.read(`${DIR}/current/privkey.pem`)).toBe(KEY);
    const entry = (await ctx.ledger.list()).find((e) => e.kind === 'certificate');
    expect(entry).toEqual({ kind: 'certificate', ref: DIR, details: { paths: [DIR] } });
    const calls = server.calls.slice(before);
    expect(calls.some((c) => c.argv.join(' ').includes('secret-part'))).toBe(false);
    expect(calls.some((c) => c.options.stdin === KEY)).toBe(true);
    expect(ctx.logs.join('\n')).not.toContain('secret-part');
  });

  it('changes nothing when in place; a renewal switches `current` to a new pair at once and drops the old one', async () => {
    const { server, ctx } = await installedSite();
    await installCertificate(material()).run(ctx);
    const before = server.calls.length;
    await installCertificate(material()).run(ctx);
    expect(server.calls.slice(before).filter((c) => c.argv[0] === 'dd')).toEqual([]);
    expect(ctx.logs.at(-1)).toContain('is in place');

    const renewed = CHAIN.replace('leaf', 'renewed-leaf');
    const state = { filesChanged: false };
    const switchAt = server.calls.length;
    await installCertificate(material(renewed, '0D0E0F'), state).run(ctx);
    expect(state.filesChanged).toBe(true);
    expect(server.fs.get(`${DIR}/current`)).toMatchObject({ type: 'link', target: '0D0E0F' });
    expect(server.fs.read(`${DIR}/current/fullchain.pem`)).toBe(renewed);
    expect(server.fs.get(`${DIR}/0A1B2C`)).toBeUndefined();
    // Both new files are complete before the one rename that makes them live; nothing after it.
    const commands = server.calls.slice(switchAt).map((c) => c.argv.join(' '));
    const placed = (file: string) => commands.indexOf(`mv -f -T -- ${DIR}/0D0E0F/${file}.siteplane-new ${DIR}/0D0E0F/${file}`);
    const link = commands.indexOf(`mv -f -T -- ${DIR}/current.siteplane-new ${DIR}/current`);
    expect(placed('privkey.pem')).toBeGreaterThanOrEqual(0);
    expect(placed('fullchain.pem')).toBeGreaterThan(placed('privkey.pem'));
    expect(link).toBeGreaterThan(placed('fullchain.pem'));
    expect(commands.slice(link + 1)).toEqual([`rm -rf -- ${DIR}/0A1B2C`]);
  });

  it('refuses a certificate directory that exists but is not this site’s', async () => {
    const { server, ctx } = await installedSite();
    server.fs.mkdirp(DIR);
    await expect(installCertificate(material()).run(ctx)).rejects.toThrow(/already exists on the server and does not belong/);
  });

  it('does nothing without a certificate (dry-run, skipped operation)', async () => {
    const { server, ctx } = await installedSite();
    const before = server.calls.length;
    await installCertificate(() => null).run(ctx);
    await ensureTlsVhost(() => null).run(ctx);
    expect(server.calls.length).toBe(before);
  });

  it('switches the vhost to TLS: 443 with the files, port 80 redirecting but still answering challenges', async () => {
    const { server, ctx } = await installedSite();
    await installCertificate(material()).run(ctx);
    const before = server.executed.length;
    await ensureTlsVhost(material()).run(ctx);
    const vhost = server.fs.read(VHOST) ?? '';
    expect(vhost).toContain('listen 443 ssl;');
    expect(vhost).toContain(`ssl_certificate ${DIR}/current/fullchain.pem;`);
    expect(vhost).toContain(`ssl_certificate_key ${DIR}/current/privkey.pem;`);
    expect(vhost).toContain('return 301 https://$host$request_uri;');
    expect(vhost.match(/location \^~ \/\.well-known\/acme-challenge\//g)).toHaveLength(2);
    // The config-file script ends with the reload (its commands as the fake ran them).
    expect(server.executed.slice(before).map((c) => c.argv.join(' '))).toContain('nginx -s reload');
  });

  it('is removed with the site: deletion walks the certificate entry', async () => {
    const { server, site, ctx } = await installedSite();
    await installCertificate(material()).run(ctx);
    await runSteps(ctx, recipeFor('static-html').remove(site, { deleteDatabase: false }));
    expect(server.fs.get(DIR)).toBeUndefined();
    expect((await ctx.ledger.list()).some((e) => e.kind === 'certificate')).toBe(false);
  });
});

describe('serverHttp01Hooks', () => {
  const token = 'LoqXcYV8q5ONbJQxbmR7SCTNo3tiAXDfowyjxAjEuX0';
  const file = `/var/lib/siteplane/acme/static-html.example.com/.well-known/acme-challenge/${token}`;

  it('publishes the key authorization where the vhost serves challenges, and removes it', async () => {
    const { server, ctx } = await installedSite();
    const hooks = serverHttp01Hooks(ctx);
    await hooks.publish(token, `${token}.thumbprint`);
    expect(server.fs.get(file)).toMatchObject({ type: 'file', mode: '644', owner: 'root', content: `${token}.thumbprint` });
    expect(server.fs.read(VHOST)).toContain('root /var/lib/siteplane/acme/static-html.example.com;');
    await hooks.remove(token);
    expect(server.fs.get(file)).toBeUndefined();
  });

  it('never turns a token that is not base64url into a path', async () => {
    const { server, ctx } = await installedSite();
    const before = server.calls.length;
    await expect(serverHttp01Hooks(ctx).publish('../../../../etc/passwd-xxxxxxxx', 'x')).rejects.toThrow(/not base64url/);
    expect(server.calls.length).toBe(before);
  });
});
