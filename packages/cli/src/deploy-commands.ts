import { openAsBlob } from 'node:fs';
import type { Command } from 'commander';
import { client } from './config.js';
import { UsageError } from './errors.js';
import { follow } from './follow.js';
import { details, paint, print, statusText } from './output.js';
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
          ? await client().deployArtifact(site, await openAsBlob(o.artifact), o.idempotencyKey)
          : await client().deploy(site, body, o.idempotencyKey);
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
      const d = await client().rollback(site, o.release);
      print(d, deploymentDetails);
      if (o.wait) await follow(operationOf(d));
    });

  const deployments = program.command('deployments').description('Deployments of a site');
  deployments.command('list <site>').action(async (site: string) => print(await client().listDeployments(site), deploymentTable));
  deployments
    .command('get <deployment>')
    .action(async (uuid: string) => print(await client().getDeployment(uuid), deploymentDetails));
  deployments
    .command('cancel <deployment>')
    .action(async (uuid: string) => print(await client().cancelDeployment(uuid), deploymentDetails));

  const source = program.command('source').description('The repository a site deploys from');
  source.command('get <site>').action(async (site: string) => print(await client().getSiteSource(site)));
  source
    .command('set <site> <vcProfile> <repository> <branch>')
    .option('--app-folder <path>')
    .action(async (site: string, vcProfile: string, repository: string, branch: string, o: { appFolder?: string }) =>
      print(
        await client().setSiteSource(site, { vcProfile, repository, branch, ...(o.appFolder ? { appFolder: o.appFolder } : {}) }),
      ),
    );
  source.command('unbind <site>').action(async (site: string) => print(await client().unbindSiteSource(site)));

  const settings = program
    .command('deploy-settings')
    .description('Build command, hooks, shared paths, releases kept, health check');
  settings.command('get <site>').action(async (site: string) => print(await client().getDeploySettings(site)));
  settings
    .command('set <site> <json>')
    .description('PATCH: the fields given replace those settings; {"reset": [...]} returns settings to their defaults')
    .action(async (site: string, json: string) => print(await client().updateDeploySettings(site, JSON.parse(json))));

  const env = program.command('env').description('Environment variables of a site (values are never shown)');
  env.command('list <site>').action(async (site: string) => print(await client().getEnvironment(site)));
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
      print(await client().updateEnvironment(site, { set: { [key]: { value, scope: o.build ? 'build' : 'runtime' } } }));
    });
  env
    .command('unset <site> <keys...>')
    .action(async (site: string, keys: string[]) => print(await client().updateEnvironment(site, { unset: keys })));
}
