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
    const ran = server.executed.length;
    const error = await ensureNginxVhost()
      .run({ ...ctx, site: changed })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigTestFailed);
    expect((error as Error).message).toContain('unknown directive "www.static-html.example.com"');
    expect((error as Error).message).toContain('the previous configuration was restored');
    expect(server.fs.read(VHOST)).toBe(previous);
    expect(server.fs.get(`${VHOST}.siteplane-previous`)).toBeUndefined();
    expect(server.fs.get(`${VHOST}.siteplane-new`)).toBeUndefined();
    expect(server.executed.slice(ran).some((c) => c.argv.join(' ') === 'nginx -s reload')).toBe(false);
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
    const [calls, ran] = [server.calls.length, server.executed.length];
    await ensureNginxVhost().run({ ...ctx, site: { ...site, ssl: { ...site.ssl, includeWww: true } } });
    expect(server.fs.read(VHOST)).toContain('server_name static-html.example.com www.static-html.example.com;');
    const commands = server.executed.slice(ran).map((c) => c.argv.join(' '));
    expect(commands.indexOf('nginx -t -q')).toBeGreaterThan(commands.indexOf(`mv -f -T -- ${VHOST}.siteplane-new ${VHOST}`));
    expect(commands.indexOf('nginx -t -q')).toBeLessThan(commands.indexOf('nginx -s reload'));
    expect(commands).toContain(`cp -p -- ${VHOST} ${VHOST}.siteplane-previous`);
    // The probe, then write, test and reload together.
    expect(server.calls.length - calls).toBe(2);
  });

  it('re-enables a vhost whose link went missing', async () => {
    const { server, ctx } = await siteWithVhost();
    server.fs.remove(ENABLED, false);
    const ran = server.executed.length;
    await ensureNginxVhost().run(ctx);
    expect(server.fs.get(ENABLED)).toEqual({ type: 'link', target: VHOST, owner: 'root' });
    const commands = server.executed.slice(ran).map((c) => c.argv.join(' '));
    expect(commands.filter((c) => c.startsWith('install ') || c.startsWith('mv '))).toEqual([]);
    expect(commands.indexOf('nginx -t -q')).toBeLessThan(commands.indexOf('nginx -s reload'));
  });

  it('removes the link it made when nginx -t rejects a vhost it only enabled', async () => {
    const { server, ctx } = await siteWithVhost();
    server.fs.remove(ENABLED, false);
    server.script((argv) => argv.join(' ') === 'nginx -t -q', { code: 1, stderr: 'nginx: [emerg] something else' });
    await expect(ensureNginxVhost().run(ctx)).rejects.toBeInstanceOf(ConfigTestFailed);
    expect(server.fs.get(ENABLED)).toBeUndefined();
    expect(server.fs.get(VHOST)).toBeDefined();
  });

  it('a second run only looks: one round trip', async () => {
    const { server, ctx } = await siteWithVhost();
    const calls = server.calls.length;
    await ensureNginxVhost().run(ctx);
    expect(server.calls.length - calls).toBe(1);
  });

  it('delivers file contents on stdin, never in argv', async () => {
    const { server } = await siteWithVhost();
    for (const call of server.calls) {
      // A constant script (`sh -c <script>`) has lines of its own; what follows it must not.
      const script = call.argv[0] === 'sh' && call.argv[1] === '-c' ? 2 : -1;
      expect(
        call.argv.some((arg, i) => i !== script && arg.includes('\n')),
        call.argv.join(' '),
      ).toBe(false);
      expect(call.argv[0]).not.toBe('echo');
    }
  });
});
