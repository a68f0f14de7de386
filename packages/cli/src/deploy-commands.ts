import { openAsBlob } from 'node:fs';
import type { Command } from 'commander';
import { client } from './config.js';
import { UsageError } from './errors.js';
import { follow } from './follow.js';
import { details, paint, print, statusText } from './output.js';
import { isUuid, resolveSite, resolveVcProfile, siteRef } from './resolve.js';
import { table } from './table.js';

type Json = Record<string, unknown>;
const commitOf = (d: Json) => {
  const c = d.commit as { sha: string; message: string } | null;
  return c ? `${c.sha.slice(0, 10)} ${c.message.split('\n')[0]}` : (d.requested_commit ?? null);
};
const deploymentDetails = (d: Json) =>
  details([
    ['Deployment', d.uuid],
    ['Status', statusText(d.status)],
    ['Trigger', d.trigger],
    ['Branch', d.branch],
    ['Commit', commitOf(d)],
    ['Artifact', d.artifact ? `${(d.artifact as Json).bytes} bytes, sha256 ${(d.artifact as Json).sha256}` : null],
    ['Release', d.release],
    ['Operation', paint('dim', String((d.operation as Json | null)?.uuid ?? ''))],
  ]);
const deploymentTable = (rows: Json[]) =>
  table(
    [
      { header: 'CREATED', value: (d) => String(d.created_at).replace('T', ' ').slice(0, 19) },
      { header: 'STATUS', value: (d) => statusText(d.status) },
      { header: 'TRIGGER', value: (d) => d.trigger },
      { header: 'BRANCH', value: (d) => d.branch },
      { header: 'COMMIT', value: commitOf },
      { header: 'RELEASE', value: (d) => d.release },
      { header: 'UUID', value: (d) => d.uuid },
    ],
    rows,
    'No deployments yet.',
  );

const operationOf = (record: Record<string, unknown>) => (record.operation as { uuid: string }).uuid;

const sourceDetails = (src: Json) =>
  details([
    ['Repository', src.repository],
    ['Provider', src.provider],
    ['Branch', src.branch],
    ['App folder', src.app_folder],
    ['Access', src.auth],
    ['Deploy key', src.deploy_public_key],
    [
      'At the provider',
      (() => {
        const reg = src.deploy_key_registration as { status: string; reason: string | null } | null;
        if (!reg) return null;
        return reg.status === 'registered' ? statusText('active') : `${paint('yellow', 'not registered')}: ${reg.reason ?? ''}`;
      })(),
    ],
    ['Profile', paint('dim', String(src.vc_profile ?? ''))],
  ]);

const settingsDetails = (st: Json) => {
  const health = st.health_check as { path: string; timeout_seconds: number };
  const defaults = new Set(st.defaults as string[]);
  const mark = (name: string, value: unknown) =>
    defaults.has(name) ? `${String(value ?? '-')} ${paint('dim', '(default)')}` : value;
  return [
    details([
      ['Build command', mark('buildCommand', st.build_command)],
      ['Artifact path', mark('artifactPath', st.artifact_path)],
      // Generic Port only (null for the types whose framework starts them).
      ['Start command', st.start_command],
      ['Releases kept', mark('keepReleases', st.keep_releases)],
      ['Health check', mark('healthCheck', `${health.path} within ${health.timeout_seconds} s`)],
      ['Shared', (st.shared_paths as { path: string }[]).map((p) => p.path).join(', ')],
      ['Platform steps', (st.platform_steps as string[]).join(' → ')],
    ]),
    '',
    table(
      [
        { header: 'HOOK', value: (h: Json) => h.name },
        { header: 'STAGE', value: (h: Json) => h.stage },
        { header: 'ON', value: (h: Json) => (h.enabled ? paint('green', 'yes') : paint('dim', 'no')) },
        { header: 'COMMAND', value: (h: Json) => String(h.command).split('\n').at(-1) },
      ],
      st.hooks as Json[],
      'No hooks.',
    ),
  ].join('\n');
};

const environmentTable = (env: Json) =>
  [
    table(
      [
        { header: 'KEY', value: (v: Json) => v.key },
        { header: 'SCOPE', value: (v: Json) => v.scope },
        { header: 'UPDATED', value: (v: Json) => String(v.updated_at).replace('T', ' ').slice(0, 19) },
      ],
      env.variables as Json[],
      'No variables.',
    ),
    ...(env.deploy_needed ? ['', paint('yellow', 'Changed since the last deployment: deploy to apply.')] : []),
  ].join('\n');

/** A deployment by uuid, or a site (domain or uuid) for its newest deployment. */
async function deploymentRef(ref: string): Promise<string> {
  const api = client();
  // A deployment's own uuid is used as it is; a site's uuid (or domain) names its newest deployment.
  if (
    isUuid(ref) &&
    (await api.getDeployment(ref).then(
      () => true,
      () => false,
    ))
  )
    return ref;
  const newest = (await api.listDeployments(await resolveSite(api, ref))).at(-1);
  if (!newest) throw new UsageError(`${ref} has no deployments yet`);
  return String(newest.uuid);
}

/** Deployments through the SDK: a site's source, settings and environment; deploy, cancel, roll back. */
export function deployCommands(program: Command): void {
  program
    .command('deploy <site>')
    .description(
      'Deploy a site from its source, or with --artifact a .tar.gz built elsewhere (no build on the server); --wait follows the steps until the deployment ends',
    )
    .option('--branch <branch>')
    .option('--commit <sha>')
    .option('--artifact <file.tar.gz>', 'upload this archive and deploy it as built (its root becomes the release)')
    .option('--idempotency-key <key>')
    .option('--wait')
    .action(
      async (
        site: string,
        o: { branch?: string; commit?: string; artifact?: string; idempotencyKey?: string; wait?: boolean },
      ) => {
        if (o.artifact && (o.branch || o.commit))
          throw new UsageError('--artifact deploys the archive: leave out --branch and --commit');
        const body = { ...(o.branch ? { branch: o.branch } : {}), ...(o.commit ? { commit: o.commit } : {}) };
        const d = o.artifact
          ? await client().deployArtifact(await siteRef(site), await openAsBlob(o.artifact), o.idempotencyKey)
          : await client().deploy(await siteRef(site), body, o.idempotencyKey);
        print(d, deploymentDetails);
        if (o.wait) await follow(operationOf(d));
      },
    );
  program
    .command('rollback <site>')
    .description('Make a kept release live again (default: the previous one), without rebuilding')
    .option('--release <release>')
    .option('--wait')
    .action(async (site: string, o: { release?: string; wait?: boolean }) => {
      const d = await client().rollback(await siteRef(site), o.release);
      print(d, deploymentDetails);
      if (o.wait) await follow(operationOf(d));
    });

  const deployments = program.command('deployments').description('Deployments of a site');
  deployments
    .command('list <site>')
    .action(async (site: string) => print(await client().listDeployments(await siteRef(site)), deploymentTable));
  deployments
    .command('get <deployment>')
    .action(async (uuid: string) => print(await client().getDeployment(await deploymentRef(uuid)), deploymentDetails));
  deployments
    .command('cancel <deployment>')
    .action(async (uuid: string) => print(await client().cancelDeployment(await deploymentRef(uuid)), deploymentDetails));

  const source = program.command('source').description('The repository a site deploys from');
  source
    .command('get <site>')
    .action(async (site: string) => print(await client().getSiteSource(await siteRef(site)), sourceDetails));
  source
    .command('set <site> <vcProfile> <repository> <branch>')
    .option('--app-folder <path>')
    .option(
      '--access <access>',
      'hosted providers: token (default) or deploy_key (a key registered read-only at the provider, fetched over ssh)',
    )
    .action(
      async (site: string, vcProfile: string, repository: string, branch: string, o: { appFolder?: string; access?: string }) =>
        print(
          (await client().setSiteSource(await siteRef(site), {
            vcProfile: await resolveVcProfile(client(), vcProfile),
            repository,
            branch,
            ...(o.appFolder ? { appFolder: o.appFolder } : {}),
            // Checked by the service (422 naming `access`).
            ...(o.access ? { access: o.access as 'token' | 'deploy_key' } : {}),
          })) as Json,
          sourceDetails,
        ),
    );
  source.command('unbind <site>').action(async (site: string) => print(await client().unbindSiteSource(await siteRef(site))));
  source
    .command('key-removals <site>')
    .description('Removals of the site’s deploy keys at providers, each with its outcome')
    .action(async (site: string) => print(await client().listDeployKeyRemovals(await siteRef(site))));

  const settings = program
    .command('deploy-settings')
    .description('Build command, start command (Generic Port), hooks, shared paths, releases kept, health check');
  settings
    .command('get <site>')
    .action(async (site: string) => print(await client().getDeploySettings(await siteRef(site)), settingsDetails));
  settings
    .command('set <site> <json>')
    .description('PATCH: the fields given replace those settings; {"reset": [...]} returns settings to their defaults')
    .action(async (site: string, json: string) =>
      print(await client().updateDeploySettings(await siteRef(site), JSON.parse(json)), settingsDetails),
    );

  const env = program.command('env').description('Environment variables of a site (values are never shown)');
  env
    .command('list <site>')
    .action(async (site: string) => print(await client().getEnvironment(await siteRef(site)), environmentTable));
  env
    .command('set <site> <key>')
    .description('Sets KEY to the value read from standard input (so it stays out of shell history)')
    .option('--build', 'available at build time (default: run time)')
    .action(async (site: string, key: string, o: { build?: boolean }) => {
      const chunks: Buffer[] = [];
      for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
      const value = Buffer.concat(chunks)
        .toString('utf8')
        .replace(/\r?\n$/, '');
      print(
        await client().updateEnvironment(await siteRef(site), {
          set: { [key]: { value, scope: o.build ? 'build' : 'runtime' } },
        }),
        environmentTable,
      );
    });
  env
    .command('unset <site> <keys...>')
    .action(async (site: string, keys: string[]) =>
      print(await client().updateEnvironment(await siteRef(site), { unset: keys }), environmentTable),
    );
}
