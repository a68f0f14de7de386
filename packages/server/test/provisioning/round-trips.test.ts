import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeLedger } from './support/fake-ledger.js';
import { FakeServer } from './support/fake-server.js';
import { isChange } from './support/footprint.js';
import { siteOf } from './support/sites.js';

/**
 * Each command is one SSH round trip, and round trips are most of the time a create takes on a
 * server that already has nginx and PHP. Steps read what they need in one probe and change in
 * one script where they can (probe.ts, config-file.ts, site-tree.ts, services.ts); these budgets
 * keep it so. The job adds one round trip of its own (detect-facts.ts).
 */
async function serverWithFirstSite(type: 'static-html' | 'php') {
  const server = new FakeServer();
  const first = siteOf(type, { domain: `first-${type}.example.com` });
  await runSteps(makeContext(server.exec, first), recipeFor(type).create(first));
  return server;
}

describe('round trips per site', () => {
  it.each([
    ['static-html', 6],
    // PHP: 9 — the pool step asks root about the pool (/etc, the master's pid) and the user about
    // the user's own temp and session directories (root never looks into the user's home).
    ['php', 9],
  ] as const)('%s: a second site of the user takes %i', async (type, budget) => {
    const server = await serverWithFirstSite(type);
    const site = siteOf(type);
    const calls = server.calls.length;
    await runSteps(makeContext(server.exec, site), recipeFor(type).create(site));
    expect(server.calls.length - calls).toBe(budget);
    expect(server.unknown).toEqual([]);
  });

  it.each([
    ['static-html', 0],
    ['php', 1], // the pool step's second probe, as the user (above)
  ] as const)('%s: running create again only probes, one round trip per step (+%i)', async (type, extra) => {
    const server = await serverWithFirstSite(type);
    const site = siteOf(type);
    const ledger = new FakeLedger();
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor(type).create(site));
    const steps = recipeFor(type).create(site);
    const calls = server.calls.length;
    await runSteps(makeContext(server.exec, site, { ledger }), steps);
    expect(server.calls.length - calls).toBe(steps.length + extra);
  });

  it('inside the site root every change is made by the site user, not by root', async () => {
    const server = await serverWithFirstSite('php');
    const site = siteOf('php');
    const root = `/home/${site.user}/${site.domain}`;
    const ran = server.executed.length;
    await runSteps(makeContext(server.exec, site), recipeFor('php').create(site));
    // Root probes (stat, readlink: metadata only); every change below the root is the user's.
    const inside = server.executed.slice(ran).filter((c) => isChange(c) && c.argv.some((arg) => arg.startsWith(`${root}/`)));
    expect(inside.length).toBeGreaterThan(0);
    for (const call of inside) expect(call.options.asUser, call.argv.join(' ')).toBe(site.user);
    expect(server.fs.get(`${root}/releases/initial/web/index.html`)).toMatchObject({ owner: 'alice', mode: '644' });
    expect(server.fs.get(root)).toMatchObject({ type: 'dir', owner: 'alice', group: 'www-data', mode: '750' });
  });
});
