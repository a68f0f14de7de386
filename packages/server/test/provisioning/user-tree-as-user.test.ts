import { SITE_TYPE_IDS } from '@siteplane/contract';
import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeLedger } from './support/fake-ledger.js';
import type { Call } from './support/fake-server.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

/**
 * ARCHITECTURE §3: the site user is not trusted; root never reads, writes or follows a path inside
 * a tree that user controls. Every command each type's create (twice: the rerun only checks) and
 * deletion runs — the commands inside the steps' scripts included, as the fake server acts them
 * out — is looked at: one that names a path below the user's home, or runs there, must run as
 * the site's user. Root's only business there is the site root itself: created by `mkdir` (which
 * never takes over what is there), handed over with `chown -h`, removed with `rm -rf` (which
 * follows no link); and the home itself (made traversable, given to `pm2 startup --hp`).
 */
const USER = 'alice';
const HOME = `/home/${USER}`;

function rootCallsInUserTree(calls: readonly Call[], siteRoot: string): string[] {
  const allowed = (call: Call) => {
    const [cmd, ...args] = call.argv;
    const inside = args.filter((arg) => arg.startsWith(`${HOME}/`));
    return (
      inside.every((arg) => arg === siteRoot) &&
      ((cmd === 'mkdir' && args[0] === '-m') || (cmd === 'chown' && args[0] === '-h') || (cmd === 'rm' && args[0] === '-rf'))
    );
  };
  return calls
    .filter((call) => call.options.asUser === undefined)
    .filter(
      (call) =>
        call.argv.some((arg) => arg.startsWith(`${HOME}/`) || arg.includes(`=${HOME}/`)) ||
        call.options.cwd?.startsWith(HOME) === true,
    )
    .filter((call) => !allowed(call))
    .map((call) => call.argv.join(' '));
}

describe.each(SITE_TYPE_IDS)('%s: root stays out of the site user’s tree', (type) => {
  it('creates, creates again and deletes with every command there run as the site user', async () => {
    const server = new FakeServer();
    const site = siteOf(type);
    expect(site.user).toBe(USER);
    const ledger = new FakeLedger();
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor(type).create(site));
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor(type).create(site));
    await runSteps(makeContext(server.exec, site, { ledger }), recipeFor(type).remove(site, { deleteDatabase: true }));
    expect(server.unknown).toEqual([]);
    expect(rootCallsInUserTree(server.executed, `${HOME}/${site.domain}`)).toEqual([]);
  });
});
