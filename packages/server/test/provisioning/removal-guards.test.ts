import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeLedger } from './support/fake-ledger.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

/** Deletion removes only what is this site's, whatever the ledger says. */
describe('removal guards', () => {
  it.each([
    ['directory', '/home/alice'],
    ['directory', '/home/alice/other.example.com'],
    ['directory', '/etc'],
    ['file', '/home/alice/static-html.example.com/../other'],
    ['certificate', '/etc/ssl/private'],
    ['nginx_vhost', '/etc/nginx/nginx.conf'],
  ] as const)('refuses to remove a %s entry %s', async (kind, ref) => {
    const server = new FakeServer();
    const site = siteOf('static-html');
    const ledger = new FakeLedger();
    await ledger.record({ kind, ref });
    await expect(
      runSteps(makeContext(server.exec, site, { ledger }), recipeFor('static-html').remove(site, { deleteDatabase: true })),
    ).rejects.toThrow(/refusing to remove/);
    expect(server.calls.filter((c) => c.argv[0] === 'rm')).toEqual([]);
    expect(ledger.entries).toHaveLength(1);
  });

  it('removes certificate files the TLS module listed under /etc/siteplane/certificates', async () => {
    const server = new FakeServer();
    const site = siteOf('static-html');
    const ledger = new FakeLedger();
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor('static-html').create(site));
    server.fs.mkdirp('/etc/siteplane/certificates/static-html.example.com');
    await ledger.record({
      kind: 'certificate',
      ref: 'static-html.example.com',
      details: { paths: ['/etc/siteplane/certificates/static-html.example.com'] },
    });
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor('static-html').remove(site, { deleteDatabase: false }));
    expect(server.fs.get('/etc/siteplane/certificates/static-html.example.com')).toBeUndefined();
    expect(ledger.entries.map((e) => e.kind)).toEqual(['system_user']);
  });

  it('fails (and keeps the entry) when nginx -t fails after removing the vhost; a retry reloads', async () => {
    const server = new FakeServer();
    const site = siteOf('static-html');
    const ledger = new FakeLedger();
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor('static-html').create(site));
    server.script((argv) => argv[0] === 'nginx' && argv[1] === '-t', {
      code: 1,
      stderr: 'nginx: [emerg] something else is broken',
    });
    await expect(
      runSteps(makeContext(server.exec, site, { ledger }), recipeFor('static-html').remove(site, { deleteDatabase: false })),
    ).rejects.toThrow(/something else is broken/);
    expect(ledger.entries.some((e) => e.kind === 'nginx_vhost')).toBe(true);
    const ran = server.executed.length;
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor('static-html').remove(site, { deleteDatabase: false }));
    expect(server.executed.slice(ran).map((c) => c.argv.join(' '))).toContain('nginx -s reload');
    expect(ledger.entries.map((e) => e.kind)).toEqual(['system_user']);
  });
});

describe('database removal order', () => {
  it('drops a PostgreSQL database before the role that owns it, whatever order the ledger returns', async () => {
    const server = new FakeServer();
    const site = siteOf('adonis');
    const ledger = new FakeLedger();
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor('adonis').create(site));
    // Entries recorded in the same millisecond may come back in either order.
    const role = ledger.entries.findIndex((e) => e.kind === 'database_user');
    const [entry] = ledger.entries.splice(role, 1);
    ledger.entries.push(entry!);
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor('adonis').remove(site, { deleteDatabase: true }));
    expect(server.postgres.roles.size).toBe(0);
    expect(server.postgres.databases.size).toBe(0);
  });
});
