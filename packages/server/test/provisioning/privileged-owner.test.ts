/**
 * The `ensure system user` step refuses to run a site as an account that administers the server
 * or belongs to the system: the API refused it when it could ask the server, but the account may
 * have changed since (added to sudo, say), or the server was not asked.
 */
import { describe, expect, it } from 'vitest';
import { ensureSystemUser } from '../../src/provisioning/steps/ensure-system-user.js';
import { makeContext } from './support/context.js';
import { FakeLedger } from './support/fake-ledger.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

async function run(server: FakeServer, user: string) {
  const ledger = new FakeLedger();
  const ctx = makeContext(server.exec, siteOf('static-html', { user }), { ledger });
  const result = await ensureSystemUser()
    .run(ctx)
    .then(
      () => null,
      (error: Error) => error,
    );
  expect(server.unknown).toEqual([]);
  return { error: result, ledger };
}

describe('ensure system user: privileged accounts', () => {
  it.each([
    ['sudo', 'sudo'],
    ['wheel', 'wheel'],
    ['adm', 'adm'],
    ['root', 'root'],
  ])('fails for an existing account in the %s group, and changes nothing', async (_, group) => {
    const server = new FakeServer();
    server.addAccount('admin1', 1000, [group]);
    const { error, ledger } = await run(server, 'admin1');
    expect(error?.message).toContain(`"admin1" is in the group ${group}`);
    expect(ledger.entries).toEqual([]);
    expect(server.calls.map((c) => c.argv[0])).not.toContain('useradd');
  });

  it('fails for an existing system account (uid below 1000, or nobody)', async () => {
    const server = new FakeServer();
    server.addAccount('appsvc', 998, []);
    server.addAccount('nobody2', 65534, []);
    expect((await run(server, 'appsvc')).error?.message).toContain('system account (uid 998)');
    expect((await run(server, 'nobody2')).error?.message).toContain('system account (uid 65534)');
  });

  it('fails by name for root and well-known system accounts without asking the server', async () => {
    for (const user of ['root', 'www-data', 'postgres', 'mysql', 'systemd-network']) {
      const server = new FakeServer();
      const { error } = await run(server, user);
      expect(error?.message, user).toContain('system account');
      expect(server.calls, user).toEqual([]);
    }
  });

  it('keeps using an existing ordinary account, and creates a new one unprivileged', async () => {
    const server = new FakeServer();
    server.addAccount('bob', 1002, ['www-pub']);
    expect((await run(server, 'bob')).error).toBeNull();
    const fresh = await run(server, 'carol');
    expect(fresh.error).toBeNull();
    expect(server.groupsLine('carol')).toBe('carol\n');
    expect(fresh.ledger.entries.map((e) => e.kind)).toEqual(['system_user']);
  });
});
