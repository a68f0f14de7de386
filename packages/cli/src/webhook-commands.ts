import type { Command } from 'commander';
import { client } from './config.js';
import { UsageError } from './errors.js';
import { details, paint, print, statusText } from './output.js';
import { resolveVcProfile, siteRef } from './resolve.js';
import { table } from './table.js';

type Json = Record<string, unknown>;

const webhookDetails = (w: Json) => {
  const urls = w.urls as Record<string, string> | null;
  const registered = w.registered as Json | null;
  return details([
    ['Enabled', w.enabled ? paint('green', 'yes') : paint('dim', 'no')],
    ['Branches', w.branches === null ? 'the source branch' : (w.branches as string[]).join(', ') || 'any'],
    // Shown only in the answer that generated them: say so, so nobody waits to see them again.
    ['Secret', w.secret ? `${w.secret} ${paint('yellow', '(shown once)')}` : null],
    ['Trigger URL', w.trigger_url ? `${w.trigger_url} ${paint('yellow', '(shown once)')}` : null],
    ['GitHub', urls?.github],
    ['GitLab', urls?.gitlab],
    ['Bitbucket', urls?.bitbucket],
    ['Gitea/Forgejo', urls?.gitea],
    ['Registered', registered ? `${registered.provider} ${registered.repository} (hook ${registered.hook_id ?? '?'})` : null],
  ]);
};

const deliveryTable = (rows: Json[]) =>
  table(
    [
      { header: 'RECEIVED', value: (d) => String(d.created_at).replace('T', ' ').slice(0, 19) },
      { header: 'FROM', value: (d) => d.provider },
      { header: 'EVENT', value: (d) => d.event },
      { header: 'OUTCOME', value: (d) => (d.outcome === 'accepted' ? statusText('succeeded') : statusText(d.outcome)) },
      { header: 'REASON', value: (d) => d.reason },
      { header: 'BRANCH', value: (d) => d.branch },
      { header: 'COMMIT', value: (d) => (typeof d.commit === 'string' ? d.commit.slice(0, 10) : null) },
      { header: 'DEPLOYMENT', value: (d) => d.deployment },
    ],
    rows,
    'No deliveries yet.',
  );

const removalTable = (rows: Json[]) =>
  table(
    [
      { header: 'WHEN', value: (r) => String(r.created_at).replace('T', ' ').slice(0, 19) },
      { header: 'PROVIDER', value: (r) => r.provider },
      { header: 'REPOSITORY', value: (r) => r.repository },
      { header: 'HOOK', value: (r) => r.provider_hook_id },
      { header: 'CAUSE', value: (r) => r.cause },
      { header: 'OUTCOME', value: (r) => (r.outcome === 'failed' ? statusText('failed') : r.outcome) },
      { header: 'DETAIL', value: (r) => r.detail },
    ],
    rows,
    'No hook removed at a provider.',
  );

/** Push to deploy: a site's webhook, its rotation, its registration at the provider, its deliveries. */
export function webhookCommands(program: Command): void {
  const hook = program.command('webhook').description('Push to deploy: the webhook of a site (domain or uuid)');
  hook
    .command('get <site>')
    .action(async (site: string) => print(await client().getSiteWebhook(await siteRef(site)), webhookDetails));
  hook
    .command('enable <site>')
    .description('Turn the webhook on; its secret and trigger URL are shown this once')
    .option(
      '--branch <pattern>',
      'deploy pushes to this branch (repeatable; release/* patterns)',
      (v, all: string[]) => [...all, v],
      [],
    )
    .option('--any-branch', 'deploy pushes to any branch')
    .option('--register <profile>', 'also create the hook at the provider through this VC profile (name or uuid)')
    .option('--repository <owner/repo>', 'with --register: the repository to create the hook on')
    .action(async (site: string, o: { branch: string[]; anyBranch?: boolean; register?: string; repository?: string }) => {
      const body: Json = {};
      if (o.anyBranch) body.branches = [];
      else if (o.branch.length > 0) body.branches = o.branch;
      if (o.register !== undefined || o.repository !== undefined) {
        if (!o.register || !o.repository) throw new UsageError('--register <profile> and --repository <owner/repo> go together');
        body.register = { vcProfile: await resolveVcProfile(client(), o.register), repository: o.repository };
      }
      print(await client().configureSiteWebhook(await siteRef(site), body), webhookDetails);
    });
  hook
    .command('rotate <site> [what...]')
    .description('Replace a leaked secret and/or trigger URL at once (default both): `secret`, `trigger_url`')
    .action(async (site: string, what: string[]) =>
      print(
        await client().configureSiteWebhook(await siteRef(site), {
          // Checked by the service (422 naming `rotate.<i>`).
          rotate: (what.length > 0 ? what : ['secret', 'trigger_url']) as ('secret' | 'trigger_url')[],
        }),
        webhookDetails,
      ),
    );
  hook
    .command('disable <site>')
    .description(
      'Turn the webhook off: its secret and trigger URL stop working; a hook registered at the provider is deleted there',
    )
    .action(async (site: string) => {
      const ref = await siteRef(site);
      const before = (await client().getSiteWebhook(ref)) as Json;
      const off = await client().deleteSiteWebhook(ref);
      // The deletion at the provider is best effort: say how it went, a failure names the hook to delete by hand.
      if (!before.registered) return print(off);
      print((await client().listWebhookRemovals(ref)).slice(-1) as Json[], removalTable);
    });
  hook
    .command('removals <site>')
    .description('Deletions of the site’s hook at its provider, each with its outcome')
    .action(async (site: string) => print((await client().listWebhookRemovals(await siteRef(site))) as Json[], removalTable));
  hook
    .command('deliveries <site>')
    .description('The last hooks received, each accepted, ignored or rejected with its reason')
    .action(async (site: string) => print(await client().listWebhookDeliveries(await siteRef(site)), deliveryTable));
}
