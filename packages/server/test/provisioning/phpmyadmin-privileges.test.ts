/**
 * phpMyAdmin's control user holds nothing: people log in with their own database accounts, and
 * the control password lives in a file the site's PHP code can read. That file is the site user's
 * alone (0600, written as that user); a site made by an earlier version (a server-wide grant, a
 * group-readable file) is brought to the same state when its create runs again.
 */
import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { ensureDatabaseAndUser } from '../../src/provisioning/steps/database/ensure-database-and-user.js';
import { ensurePhpMyAdminConfig } from '../../src/provisioning/steps/phpmyadmin/ensure-phpmyadmin-config.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeLedger } from './support/fake-ledger.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

async function created() {
  const server = new FakeServer();
  const site = siteOf('phpmyadmin');
  const ledger = new FakeLedger();
  const ctx = makeContext(server.exec, site, { ledger });
  await runSteps(ctx, recipeFor('phpmyadmin').create(site));
  expect(server.unknown).toEqual([]);
  return { server, site, ledger, ctx, config: `/home/${site.user}/${site.domain}/releases/initial/config.inc.php` };
}

describe("phpMyAdmin's control user and config.inc.php", () => {
  it('creates the phpmyadmin account with no rights at all', async () => {
    const { server } = await created();
    expect([...server.mysql.accounts.keys()].sort()).toEqual(['phpmyadmin@127.0.0.1', 'phpmyadmin@localhost']);
    expect([...server.mysql.grants]).toEqual([]);
    expect(server.mysql.statements.some((st) => st.startsWith('GRANT'))).toBe(false);
  });

  it("writes config.inc.php as the site's user, readable by that user only", async () => {
    const { server, site, config } = await created();
    expect(server.fs.get(config)).toMatchObject({ type: 'file', owner: site.user, mode: '600' });
    const writes = server.calls.filter((c) => c.argv.some((a) => a.includes('config.inc.php')));
    expect(writes.length).toBeGreaterThan(0);
    for (const call of writes) expect(call.options.asUser, call.argv.join(' ')).toBe(site.user);
    const dd = writes.find((c) => c.argv[0] === 'dd');
    expect(dd?.options.umask).toBe('077');
  });

  it('takes back the server-wide rights and narrows the file an earlier version left', async () => {
    const { server, site, ledger, config } = await created();
    for (const host of ['localhost', '127.0.0.1']) server.mysql.grants.add(`phpmyadmin@${host}|*`);
    const file = server.fs.get(config);
    if (file?.type !== 'file') throw new Error('no config file');
    file.mode = '640';
    const before = file.content;

    const ctx = makeContext(server.exec, site, { ledger });
    await runSteps(ctx, [ensureDatabaseAndUser(), ensurePhpMyAdminConfig()]);
    expect([...server.mysql.grants]).toEqual([]);
    expect(server.mysql.statements).toContain('REVOKE ALL PRIVILEGES, GRANT OPTION FROM ?@?');
    expect(server.fs.get(config)).toMatchObject({ mode: '600', content: before });

    // A third run only checks.
    const calls = server.calls.length;
    await runSteps(makeContext(server.exec, site, { ledger }), [ensureDatabaseAndUser(), ensurePhpMyAdminConfig()]);
    expect(server.calls.length - calls).toBe(2);
  });

  it('refuses a config.inc.php that is not a file (a link the site user planted)', async () => {
    const { server, site, ledger, config } = await created();
    server.fs.nodes.set(config, { type: 'link', target: '/etc/shadow', owner: site.user });
    const ctx = makeContext(server.exec, site, { ledger });
    await expect(ensurePhpMyAdminConfig().run(ctx)).rejects.toThrow(/symlink, not the configuration file/);
  });
});
