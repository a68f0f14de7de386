import { SiteplaneClient } from '@siteplane/sdk';
import type { Command } from 'commander';

export function client(): SiteplaneClient {
  const token = process.env.SITEPLANE_TOKEN;
  if (!token) throw new Error('Set SITEPLANE_TOKEN (siteplane token create --name me)');
  return new SiteplaneClient({ baseUrl: process.env.SITEPLANE_URL ?? 'http://127.0.0.1:8080', token });
}

/** JSON of the answer; nothing for an empty one (a 204 of a delete), rather than the word `undefined`. */
export const print = (value: unknown): void => {
  if (value !== undefined) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
};

/** Commands over the API through the SDK (SITEPLANE_URL, SITEPLANE_TOKEN). Output is JSON. */
export function apiCommands(program: Command): void {
  const sites = program.command('sites').description('Sites on servers');
  sites.command('list <server>').action(async (server: string) => print(await client().listSites(server)));
  sites.command('get <site>').action(async (site: string) => print(await client().getSite(site)));
  sites
    .command('create <json>')
    .description('Create a site from a JSON body (spec §2.1); --wait follows the operation')
    .option('--idempotency-key <key>')
    .option('--wait', 'print progress until the operation ends')
    .action(async (json: string, o: { idempotencyKey?: string; wait?: boolean }) => {
      const site = await client().createSite(JSON.parse(json) as Record<string, unknown>, o.idempotencyKey);
      print(site);
      if (o.wait) await follow((site.operation as { uuid: string }).uuid);
    });
  sites
    .command('delete <site>')
    .option('--delete-database', 'also drop the database and its user')
    .option('--wait')
    .action(async (site: string, o: { deleteDatabase?: boolean; wait?: boolean }) => {
      const record = await client().deleteSite(site, o.deleteDatabase === true);
      print(record);
      if (o.wait) await follow((record.operation as { uuid: string }).uuid);
    });
  sites
    .command('retry <site>')
    .description('Run a failed create or delete again; steps that already succeeded are checked, not redone')
    .option('--wait')
    .action(async (site: string, o: { wait?: boolean }) => {
      const record = await client().retrySite(site);
      print(record);
      if (o.wait) await follow((record.operation as { uuid: string }).uuid);
    });
  sites
    .command('ssl <site>')
    .description('Issue or re-issue the certificate now (after fixing what ssl.error named)')
    .option('--wait')
    .action(async (site: string, o: { wait?: boolean }) => {
      const record = await client().retrySsl(site);
      print(record);
      if (o.wait) await follow((record.operation as { uuid: string }).uuid);
    });
  program
    .command('operation <uuid>')
    .option('--wait')
    .action(async (uuid: string, o: { wait?: boolean }) => (o.wait ? follow(uuid) : print(await client().getOperation(uuid))));

  const servers = program.command('servers').description('Servers');
  servers.command('list').action(async () => print(await client().listServers()));
  servers
    .command('add <name> <ip>')
    .option('--connection <kind>', 'ssh, local or dry-run', 'ssh')
    .option('--ssh-port <port>', 'SSH port', '22')
    .option('--ssh-user <user>', 'SSH user', 'root')
    .action(async (name: string, ip: string, o: { connection: string; sshPort: string; sshUser: string }) =>
      print(await client().createServer({ name, ip, connection: o.connection, sshPort: Number(o.sshPort), sshUser: o.sshUser })),
    );
  servers.command('verify <server>').action(async (s: string) => print(await client().verifyServer(s)));
  servers.command('remove <server>').action(async (s: string) => print(await client().deleteServer(s)));
  servers
    .command('add-user <server> <username>')
    .action(async (s: string, u: string) => print(await client().createServerUser(s, u)));
  servers.command('users <server>').action(async (s: string) => print(await client().listServerUsers(s)));

  const vc = program.command('vc').description('Version control profiles');
  vc.command('list').action(async () => print(await client().listVcProfiles()));
  vc.command('get <profile>').action(async (p: string) => print(await client().getVcProfile(p)));
  vc.command('add <provider> <name>')
    .description('Add a github, gitlab, bitbucket, gitea or git profile; the token is checked against the provider')
    .option('--token <token>', 'provider token (visible in the process list; prefer --token-stdin)')
    .option('--token-stdin', 'read the token from standard input')
    .option('--base-url <url>', 'self-hosted provider (GitHub Enterprise, GitLab, Gitea/Forgejo)')
    .option('--repo <url...>', 'git provider: remote URLs')
    .action(
      async (provider: string, name: string, o: { token?: string; tokenStdin?: boolean; baseUrl?: string; repo?: string[] }) => {
        if (o.token !== undefined && o.tokenStdin) throw new Error('Give --token or --token-stdin, not both');
        const token = o.tokenStdin ? await readStdin() : o.token;
        print(await client().createVcProfile({ provider, name, token, baseUrl: o.baseUrl, repositories: o.repo }));
      },
    );
  vc.command('remove <profile>').action(async (p: string) => print(await client().deleteVcProfile(p)));
  vc.command('repos <profile>').action(async (p: string) => print(await client().listRepositories(p)));
  vc.command('repo <profile> <name>').action(async (p: string, n: string) => print(await client().getRepository(p, n)));

  const dns = program.command('dns').description('DNS profiles');
  dns.command('list').action(async () => print(await client().listDnsProfiles()));
  dns
    .command('add <provider> <name> <credentialsJson>')
    .action(async (provider: string, name: string, creds: string) =>
      print(await client().createDnsProfile({ provider, name, credentials: JSON.parse(creds) })),
    );
  dns.command('verify <profile>').action(async (p: string) => print(await client().verifyDnsProfile(p)));
  dns.command('remove <profile>').action(async (p: string) => print(await client().deleteDnsProfile(p)));
}

/** All of standard input, without the trailing newline `echo` or a file adds. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** Prints steps and log lines of an operation until it ends. */
export async function follow(uuid: string): Promise<void> {
  let after = 0;
  for (;;) {
    const op = (await client().getOperation(uuid, after)) as {
      status: string;
      logs: { seq: number; line: string }[];
      error: unknown;
    };
    for (const l of op.logs) {
      process.stdout.write(`${l.line}\n`);
      after = l.seq;
    }
    if (op.status === 'succeeded' || op.status === 'failed' || op.status === 'cancelled') {
      process.stdout.write(`operation ${op.status}${op.error ? `: ${JSON.stringify(op.error)}` : ''}\n`);
      if (op.status === 'failed') process.exitCode = 1;
      return;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
}
