import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { ConfigTestFailed } from '../../src/provisioning/steps/config-file.js';
import { ensureNginxVhost } from '../../src/provisioning/steps/ensure-nginx-vhost.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

/** ARCHITECTURE §3: render → temp → test → atomic rename → reload; a failed test restores the previous file. */
async function siteWithVhost() {
  const server = new FakeServer();
  const site = siteOf('static-html');
  const ctx = makeContext(server.exec, site);
  await runSteps(ctx, recipeFor('static-html').create(site));
  return { server, site, ctx };
}

const VHOST = '/etc/nginx/sites-available/static-html.example.com.conf';
const ENABLED = '/etc/nginx/sites-enabled/static-html.example.com.conf';

describe('config files', () => {
  it('restores the previous vhost when nginx -t rejects the new one, and does not reload', async () => {
    const { server, site, ctx } = await siteWithVhost();
    const previous = server.fs.read(VHOST);
    const changed = { ...site, ssl: { ...site.ssl, includeWww: true } };
    server.nginxRejects = 'www.static-html.example.com';
    const calls = server.calls.length;
    const error = await ensureNginxVhost()
      .run({ ...ctx, site: changed })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigTestFailed);
    expect((error as Error).message).toContain('unknown directive "www.static-html.example.com"');
    expect((error as Error).message).toContain('the previous configuration was restored');
    expect(server.fs.read(VHOST)).toBe(previous);
    expect(server.fs.get(`${VHOST}.siteplane-previous`)).toBeUndefined();
    expect(server.fs.get(`${VHOST}.siteplane-new`)).toBeUndefined();
    expect(server.calls.slice(calls).some((c) => c.argv.join(' ') === 'nginx -s reload')).toBe(false);
  });

  it('removes a new vhost and its link when nginx -t rejects it', async () => {
    const server = new FakeServer();
    const site = siteOf('static-html');
    server.nginxRejects = 'static-html.example.com';
    const error = await runSteps(makeContext(server.exec, site), recipeFor('static-html').create(site)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigTestFailed);
    expect(server.fs.get(VHOST)).toBeUndefined();
    expect(server.fs.get(ENABLED)).toBeUndefined();
  });

  it('writes a changed vhost and reloads nginx once it passes', async () => {
    const { server, site, ctx } = await siteWithVhost();
    const calls = server.calls.length;
    await ensureNginxVhost().run({ ...ctx, site: { ...site, ssl: { ...site.ssl, includeWww: true } } });
    expect(server.fs.read(VHOST)).toContain('server_name static-html.example.com www.static-html.example.com;');
    const commands = server.calls.slice(calls).map((c) => c.argv.join(' '));
    expect(commands.indexOf('nginx -t -q')).toBeLessThan(commands.indexOf('nginx -s reload'));
    expect(commands).toContain(`cp -p -- ${VHOST} ${VHOST}.siteplane-previous`);
  });

  it('re-enables a vhost whose link went missing', async () => {
    const { server, ctx } = await siteWithVhost();
    server.fs.remove(ENABLED, false);
    await ensureNginxVhost().run(ctx);
    expect(server.fs.get(ENABLED)).toEqual({ type: 'link', target: VHOST, owner: 'root' });
  });

  it('delivers file contents on stdin, never in argv', async () => {
    const { server } = await siteWithVhost();
    for (const call of server.calls) {
      expect(
        call.argv.some((arg) => arg.includes('\n')),
        call.argv.join(' '),
      ).toBe(false);
      expect(call.argv[0]).not.toBe('echo');
    }
  });
});
