import type { SiteTypeId } from '@siteplane/contract';
import { describe, expect, it } from 'vitest';
import type { Executor } from '../../src/provisioning/executor.js';
import { DryRunExecutor } from '../../src/provisioning/executors/dry-run.js';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import type { LedgerEntry } from '../../src/provisioning/step.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeLedger } from './support/fake-ledger.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

/**
 * ARCHITECTURE §3: Node apps run under their user's PM2; the daemon (and the boot unit `pm2 startup`
 * installed) are shared by the user's Node sites and go with the last one.
 */
interface Site {
  type: SiteTypeId;
  site: ReturnType<typeof siteOf>;
  ledger: FakeLedger;
}

/** Sites of one server, asked about each other as the job runner asks (storage/ledger-store.ts). */
function sitesOn(exec: Executor, specs: [SiteTypeId, string, string][]) {
  const sites: Site[] = specs.map(([type, domain, user]) => ({
    type,
    site: siteOf(type, { domain, user }),
    ledger: new FakeLedger(),
  }));
  const ctx = (s: Site) =>
    makeContext(exec, s.site, {
      ledger: s.ledger,
      shared: {
        sharedResourceInUse: async (entry: Pick<LedgerEntry, 'kind' | 'ref'>) =>
          sites.some((o) => o !== s && o.ledger.entries.some((e) => e.kind === entry.kind && e.ref === entry.ref)),
      },
    });
  return {
    sites,
    create: (s: Site) => runSteps(ctx(s), recipeFor(s.type).create(s.site)),
    remove: async (s: Site) => {
      const c = ctx(s);
      await runSteps(c, recipeFor(s.type).remove(s.site, { deleteDatabase: true }));
      // The job runner marks the site deleted: its ledger no longer counts.
      sites.splice(sites.indexOf(s), 1);
      return c.logs;
    },
  };
}

describe('the PM2 daemon of a user', () => {
  it('dry-run: `pm2 kill` is issued as the user for their last Node site only', async () => {
    const lines: string[] = [];
    // A server where alice exists and her PM2 daemon runs (pid 4242), with no process left once a site's is deleted.
    const exec = new DryRunExecutor({
      onCommand: (line) => lines.push(line),
      answers: [
        { match: ['getent', 'passwd', 'alice'], result: { stdout: 'alice:x:1001:1001::/home/alice:/bin/bash\n' } },
        { match: ['cat', '--', '/home/alice/.pm2/pm2.pid'], result: { stdout: '4242\n' } },
        { match: (argv) => argv[0] === 'pm2' && argv[1] === 'jlist', result: { stdout: '[]\n' } },
      ],
    });
    const server = sitesOn(exec, [
      ['nodejs-ssr', 'one.example.com', 'alice'],
      ['next-ssr', 'two.example.com', 'alice'],
      ['static-html', 'three.example.com', 'alice'],
    ]);
    const [one, two, three] = server.sites as [Site, Site, Site];
    for (const s of server.sites) await server.create(s);
    const kills = () => lines.filter((line) => line.startsWith('pm2 kill '));
    expect(kills()).toEqual([]);

    const logsOne = await server.remove(one);
    expect(kills()).toEqual([]);
    expect(logsOne).toContain('kept the PM2 daemon of alice: another site of alice uses it');
    // Not a Node site: its deletion has nothing to do with PM2.
    await server.remove(three);
    expect(kills()).toEqual([]);

    const logsTwo = await server.remove(two);
    expect(kills()).toHaveLength(1);
    const options = JSON.parse(kills()[0]!.slice('pm2 kill '.length)) as { asUser: string; env: Record<string, string> };
    expect(options).toMatchObject({ asUser: 'alice', env: { HOME: '/home/alice', PM2_HOME: '/home/alice/.pm2' } });
    expect(logsTwo).toContain('stopped the PM2 daemon of alice (no other site of alice uses PM2)');
    expect(two.ledger.entries.filter((e) => e.kind.startsWith('pm2'))).toEqual([]);
  });

  it("stops only that user's daemon, and keeps one that still runs the user's own processes", async () => {
    const fake = new FakeServer();
    const server = sitesOn(fake.exec, [
      ['nodejs-ssr', 'one.example.com', 'alice'],
      ['soketi', 'two.example.com', 'bob'],
    ]);
    const [alice, bob] = server.sites as [Site, Site];
    for (const s of server.sites) await server.create(s);
    fake.pm2Of('bob').set('bobs-own-worker', { status: 'online', ecosystem: '' });

    await server.remove(alice);
    expect(fake.running.has('pm2:alice')).toBe(false);
    expect(fake.fs.get('/home/alice/.pm2/pm2.pid')).toBeUndefined();
    expect(fake.running.has('pm2:bob')).toBe(true);

    const logs = await server.remove(bob);
    expect(logs).toContain('kept the PM2 daemon of bob: it still runs bobs-own-worker');
    expect(fake.running.has('pm2:bob')).toBe(true);
    expect([...fake.pm2Of('bob').keys()]).toEqual(['bobs-own-worker']);
    // Released: bob's site no longer lists it, so no later deletion stops the daemon bob uses.
    expect(bob.ledger.entries.map((e) => e.kind)).toEqual(['system_user']);
    expect(fake.unknown).toEqual([]);
  });

  it('a deletion retried after its connection dropped during `pm2 kill` finishes without starting PM2 again', async () => {
    const fake = new FakeServer();
    const server = sitesOn(fake.exec, [['nodejs-ssr', 'one.example.com', 'alice']]);
    const [site] = server.sites as [Site];
    await server.create(site);
    // The daemon stops, but the answer never arrives: the step fails with its entry still listed.
    fake.script(
      (argv) => {
        if (argv[0] !== 'pm2' || argv[1] !== 'kill') return false;
        fake.stopPm2Daemon('alice');
        return true;
      },
      { code: 255, stderr: 'Connection reset by peer' },
    );
    await expect(server.remove(site)).rejects.toThrow(/stop the PM2 daemon of alice/);
    expect(site.ledger.entries.map((e) => e.kind)).toEqual(['system_user', 'directory', 'directory', 'pm2_daemon']);
    const calls = fake.calls.length;

    const logs = await server.remove(site);
    expect(logs).toContain('the PM2 daemon of alice is not running');
    expect(fake.calls.slice(calls).filter((c) => c.argv[0] === 'pm2')).toEqual([]);
    expect(fake.running.has('pm2:alice')).toBe(false);
    expect(site.ledger.entries.map((e) => e.kind)).toEqual(['system_user']);
  });

  it('with systemd: the boot unit Siteplane installed goes with the last Node site; one it did not install stays', async () => {
    const fake = new FakeServer();
    fake.systemd = true;
    fake.fs.mkdirp('/run/systemd/system');
    const unit = (user: string) => `/etc/systemd/system/pm2-${user}.service`;
    const wants = (user: string) => `/etc/systemd/system/multi-user.target.wants/pm2-${user}.service`;
    // An administrator's own unit for carol, from before Siteplane.
    fake.fs.mkdirp('/etc/systemd/system');
    fake.fs.write(unit('carol'), '[Service]\nUser=carol\n');
    const server = sitesOn(fake.exec, [
      ['nodejs-ssr', 'one.example.com', 'alice'],
      ['adonis', 'two.example.com', 'alice'],
      ['nodejs-ssr', 'three.example.com', 'carol'],
    ]);
    const [one, two, carol] = server.sites as [Site, Site, Site];
    for (const s of server.sites) await server.create(s);
    const startups = fake.calls.filter((c) => c.argv[0] === 'pm2' && c.argv[1] === 'startup').map((c) => c.argv[4]);
    expect(startups).toEqual(['alice']);
    for (const s of [one, two])
      expect(s.ledger.entries.some((e) => e.kind === 'pm2_startup' && e.ref === unit('alice'))).toBe(true);
    expect(carol.ledger.entries.some((e) => e.kind === 'pm2_startup')).toBe(false);

    await server.remove(one);
    expect(fake.fs.get(unit('alice'))).toBeDefined();
    expect(fake.running.has('pm2:alice')).toBe(true);
    const calls = fake.calls.length;
    await server.remove(two);
    expect(fake.fs.get(unit('alice'))).toBeUndefined();
    expect(fake.fs.get(wants('alice'))).toBeUndefined();
    expect(fake.calls.slice(calls).map((c) => c.argv.join(' '))).toContain('systemctl daemon-reload');
    expect(fake.running.has('pm2:alice')).toBe(false);

    await server.remove(carol);
    expect(fake.fs.read(unit('carol'))).toBe('[Service]\nUser=carol\n');
    expect(fake.running.has('pm2:carol')).toBe(false);
    expect(fake.unknown).toEqual([]);
  });
});
