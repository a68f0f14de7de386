import { parseAccount, privilegedAccount, privilegedName } from '../../domain/servers/privileged-accounts.js';
import type { Step, StepContext } from '../step.js';
import { AS_ROOT, mustRun, StepError } from './commands.js';
import { recordOnce } from './ledger.js';
import { groupsOf, kindOf, passwdEntryOf, probe } from './probe.js';
import { makeDirectory } from './remote-files.js';
import { checkSystemUser, NGINX_GROUP } from './site-layout.js';

/**
 * The site's system user (the server user) with home /home/<user>. An existing user is left as it
 * is (shell, groups, password); only a missing home directory is created, and an existing account
 * that is privileged (a system account, a member of sudo/wheel/adm/root) fails the step: the API
 * refused it when the server could be asked, but the server may have changed since, or not been
 * asked (a server verified after the user was added). The user is recorded
 * only when this step created it, and removal keeps it: it belongs to the server user record.
 * Holds the server's `system-users` lock from the check to the creation.
 */
export function ensureSystemUser(): Step {
  return {
    name: 'ensure system user',
    async run(ctx: StepContext) {
      const user = checkSystemUser(ctx.site.user);
      const byName = privilegedName(user, null);
      if (byName) throw new StepError(`${byName} Siteplane does not run sites as it.`);
      const home = `/home/${user}`;
      // Two first sites of one user run side by side: without the lock both see no user and the
      // second useradd fails ("already exists"); useradd of two users at once may also fail to
      // lock /etc/passwd. One lock per server serialises the check and the creation.
      const homeMissing = await ctx.withServerLock('system-users', async () => {
        // The user, its groups and the home in one round trip.
        const [entry, groups, homeKind] = await probe(ctx, [passwdEntryOf(user), groupsOf(user), kindOf(home)]);
        const account = parseAccount(entry, groups);
        if (account) {
          const refused = privilegedAccount(user, account);
          if (refused) throw new StepError(`${refused} Siteplane does not run sites as it.`);
          ctx.log(`system user ${user} exists`);
          return homeKind === null;
        }
        await recordOnce(ctx, { kind: 'system_user', ref: user, details: { home, keptOnRemove: true } });
        await mustRun(
          ctx,
          ['useradd', '--create-home', '--home-dir', home, '--shell', '/bin/bash', '--user-group', '--', user],
          AS_ROOT,
          `create system user ${user}`,
        );
        ctx.log(`created system user ${user} with home ${home}`);
        // useradd --create-home made it (or found it there).
        return false;
      });
      if (homeMissing) {
        // As ensure-site-directory.ts keeps it: nginx passes through, other site users do not.
        await makeDirectory(ctx, home, { owner: user, group: NGINX_GROUP, mode: '0710' });
        ctx.log(`created home directory ${home}`);
      }
    },
  };
}
