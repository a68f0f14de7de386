import type { Schemas } from '@siteplane/sdk';
import type { Command } from 'commander';
import { client } from './config.js';
import { UsageError } from './errors.js';
import { jsonObject, readStdin } from './input.js';
import { details, print, statusText } from './output.js';
import { resolveDnsProfile, resolveVcProfile } from './resolve.js';
import { table } from './table.js';

type Json = Record<string, unknown>;
/** Profiles are named by name or uuid. */
const vcRef = (p: string) => resolveVcProfile(client(), p);
const dnsRef = (p: string) => resolveDnsProfile(client(), p);

const profileTable = (profiles: Json[]) =>
  table(
    [
      { header: 'NAME', value: (p) => p.name },
      { header: 'PROVIDER', value: (p) => p.provider },
      { header: 'ACCOUNT', value: (p) => p.account },
      { header: 'STATUS', value: (p) => statusText(p.status) },
      { header: 'UUID', value: (p) => p.uuid },
    ],
    profiles,
    'No profiles yet.',
  );

const profileDetails = (p: Json) =>
  details([
    ['Profile', p.name],
    ['UUID', p.uuid],
    ['Provider', p.provider],
    ['Account', p.account],
    ['Status', statusText(p.status)],
  ]);

const repoTable = (repos: Json[]) =>
  table(
    [
      { header: 'REPOSITORY', value: (r) => r.name },
      { header: 'DEFAULT BRANCH', value: (r) => r.default_branch },
      { header: 'PRIVATE', value: (r) => (r.private === null ? null : r.private ? 'yes' : 'no') },
    ],
    repos,
    'No repositories.',
  );

/** Version-control and DNS profiles. */
export function profileCommands(program: Command): void {
  const vc = program.command('vc').description('Version control profiles');
  vc.command('list').action(async () => print(await client().listVcProfiles(), profileTable));
  vc.command('get <profile>').action(async (p: string) => print(await client().getVcProfile(await vcRef(p)), profileDetails));
  vc.command('add <provider> <name>')
    .description('Add a github, gitlab, bitbucket, gitea or git profile; the token is checked against the provider')
    .option('--token <token>', 'provider token (visible in the process list; prefer --token-stdin)')
    .option('--token-stdin', 'read the token from standard input')
    .option('--base-url <url>', 'self-hosted provider (GitHub Enterprise, GitLab, Gitea/Forgejo)')
    .option('--repo <url...>', 'git provider: remote URLs')
    .action(
      async (provider: string, name: string, o: { token?: string; tokenStdin?: boolean; baseUrl?: string; repo?: string[] }) => {
        if (o.token !== undefined && o.tokenStdin) throw new UsageError('Give --token or --token-stdin, not both');
        const token = o.tokenStdin ? await readStdin() : o.token;
        print(
          await client().createVcProfile({
            // The service checks the provider and answers a precise problem when it is unknown.
            provider: provider as Schemas['CreateVcProfileRequest']['provider'],
            name,
            token,
            baseUrl: o.baseUrl,
            repositories: o.repo,
          }),
          profileDetails,
        );
      },
    );
  vc.command('remove <profile>').action(async (p: string) => print(await client().deleteVcProfile(await vcRef(p))));
  vc.command('repos <profile>').action(async (p: string) => print(await client().listRepositories(await vcRef(p)), repoTable));
  vc.command('repo <profile> <name>').action(async (p: string, n: string) =>
    print(await client().getRepository(await vcRef(p), n), (r) =>
      [
        details([
          ['Repository', r.name],
          ['Default branch', r.default_branch],
        ]),
        '',
        table(
          [
            { header: 'BRANCH', value: (b: Json) => b.name },
            { header: 'COMMIT', value: (b: Json) => b.commit },
          ],
          r.branches as Json[],
        ),
      ].join('\n'),
    ),
  );

  const dns = program.command('dns').description('DNS profiles');
  dns.command('list').action(async () => print(await client().listDnsProfiles(), profileTable));
  dns
    .command('add <provider> <name> [credentialsJson]')
    .description('Credentials as a JSON object: the argument, or --file (- for standard input, out of the process list)')
    .option('--file <path>', 'read the credentials JSON from this file (- for standard input)')
    .action(async (provider: string, name: string, creds: string | undefined, o: { file?: string }) =>
      print(
        await client().createDnsProfile({
          provider,
          name,
          credentials: await jsonObject(creds, o.file),
        } as Schemas['CreateDnsProfileRequest']),
        profileDetails,
      ),
    );
  dns
    .command('verify <profile>')
    .action(async (p: string) => print(await client().verifyDnsProfile(await dnsRef(p)), profileDetails));
  dns.command('remove <profile>').action(async (p: string) => print(await client().deleteDnsProfile(await dnsRef(p))));
}
