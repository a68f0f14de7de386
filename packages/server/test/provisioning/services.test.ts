import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

/** Every command the server ran, including those inside the steps' scripts. */
const commands = (server: FakeServer) => server.executed.map((c) => c.argv.join(' '));

describe('services with and without systemd', () => {
  it('without systemd: starts nginx and php-fpm directly, reloads by signal', async () => {
    const server = new FakeServer();
    const one = siteOf('php', { domain: 'one.example.com' });
    await runSteps(makeContext(server.exec, one), recipeFor('php').create(one));
    expect(commands(server)).toEqual(
      expect.arrayContaining(['nginx', 'install -d -m 0755 /run/php', 'php-fpm8.2 --fpm-config /etc/php/8.2/fpm/php-fpm.conf']),
    );
    const pid = server.running.get('php-fpm8.2');
    const two = siteOf('php', { domain: 'two.example.com', user: 'bob' });
    const calls = server.executed.length;
    await runSteps(makeContext(server.exec, two), recipeFor('php').create(two));
    expect(commands(server).slice(calls)).toEqual(expect.arrayContaining([`kill -USR2 ${pid}`, 'nginx -s reload']));
    expect(commands(server).some((c) => c.startsWith('systemctl'))).toBe(false);
  });

  it('with systemd: systemctl for nginx, php-fpm and PM2 at boot', async () => {
    const server = new FakeServer();
    server.systemd = true;
    server.fs.mkdirp('/run/systemd/system');
    const php = siteOf('php');
    await runSteps(makeContext(server.exec, php), recipeFor('php').create(php));
    expect(commands(server)).toEqual(
      expect.arrayContaining(['systemctl reload-or-restart nginx', 'systemctl reload-or-restart php8.2-fpm']),
    );
    const node = siteOf('nodejs-ssr');
    await runSteps(makeContext(server.exec, node), recipeFor('nodejs-ssr').create(node));
    expect(commands(server)).toContain('pm2 startup systemd -u alice --hp /home/alice');
  });

  it('restarts a PM2 process that is not online, without other changes', async () => {
    const server = new FakeServer();
    const site = siteOf('nodejs-ssr');
    const ctx = makeContext(server.exec, site);
    await runSteps(ctx, recipeFor('nodejs-ssr').create(site));
    server.pm2Of('alice').get('nodejs-ssr.example.com')!.status = 'errored';
    const calls = server.executed.length;
    await runSteps(makeContext(server.exec, site, { ledger: ctx.ledger }), recipeFor('nodejs-ssr').create(site));
    expect(
      commands(server)
        .slice(calls)
        .filter((c) => c.startsWith('pm2 ') && c !== 'pm2 jlist'),
    ).toEqual(['pm2 restart nodejs-ssr.example.com', 'pm2 save']);
  });
});
