import type { Schemas } from '@siteplane/sdk';
import type { Command } from 'commander';
import { client } from './config.js';
import { details, print, statusText } from './output.js';
import { resolveServer } from './resolve.js';
import { table } from './table.js';

type Json = Record<string, unknown>;

const serverTable = (servers: Json[]) =>
  table(
    [
      { header: 'NAME', value: (s) => s.name },
      { header: 'IP', value: (s) => s.ip },
      { header: 'CONNECTION', value: (s) => s.connection },
      { header: 'STATUS', value: (s) => statusText(s.status) },
      { header: 'PHP', value: (s) => (s.facts as Json | null)?.php },
      { header: 'UUID', value: (s) => s.uuid },
    ],
    servers,
    'No servers yet: siteplane servers add <name> <ip>',
  );

const serverDetails = (s: Json) => {
  const f = (s.facts ?? {}) as Json;
  return details([
    ['Server', s.name],
    ['UUID', s.uuid],
    ['Address', `${s.ssh_user}@${s.ip}:${s.ssh_port} (${s.connection})`],
    ['Status', statusText(s.status)],
    ['OS', f.os],
    ['PHP', Array.isArray(f.php) ? f.php.join(', ') : null],
    ['Node', f.node],
    ['MySQL', f.mysql],
    ['PostgreSQL', f.postgresql],
    ['Public key', s.public_key],
  ]);
};

const userTable = (users: Json[]) =>
  table(
    [
      { header: 'USERNAME', value: (u) => u.username },
      { header: 'UUID', value: (u) => u.uuid },
    ],
    users,
    'No users yet: siteplane servers add-user <server> <username>',
  );

interface AddServerOptions {
  connection: string;
  sshPort: string;
  sshUser: string;
  os?: string;
  php?: string;
  node?: string;
  mysql?: string;
  postgresql?: string;
}

type Facts = NonNullable<Schemas['CreateServerRequest']['facts']>;

/** The facts given by flags, or nothing when none was (the service then keeps its defaults). */
function declaredFacts(o: AddServerOptions): { facts?: Facts } {
  const facts: Record<string, unknown> = {};
  if (o.os !== undefined) facts.os = o.os;
  if (o.php !== undefined)
    facts.php = o.php
      .split(',')
      .map((v) => v.trim())
      .filter(Boolean);
  if (o.node !== undefined) facts.node = o.node;
  if (o.mysql !== undefined) facts.mysql = o.mysql;
  if (o.postgresql !== undefined) facts.postgresql = o.postgresql;
  return Object.keys(facts).length > 0 ? { facts: facts as Facts } : {};
}

/** Servers and their users; a server is named by its name or uuid. */
export function serverCommands(program: Command): void {
  const servers = program.command('servers').description('Servers');
  servers.command('list').action(async () => print(await client().listServers(), serverTable));
  servers
    .command('add <name> <ip>')
    .description(
      'Add a server; SSH servers are checked by `servers verify`, which records their facts. A dry-run server ' +
        'records commands instead of running them and knows only the facts declared here (--os "debian 12" --php 8.2).',
    )
    .option('--connection <kind>', 'ssh, local or dry-run', 'ssh')
    .option('--ssh-port <port>', 'SSH port', '22')
    .option('--ssh-user <user>', 'SSH user', 'root')
    .option('--os <name>', 'declared facts: the OS, e.g. "debian 12" (verify replaces declared facts)')
    .option('--php <versions>', 'declared facts: PHP versions installed, comma-separated (8.2,8.3)')
    .option('--node <version>', 'declared facts: the Node.js version installed')
    .option('--mysql <engine>', 'declared facts: the MySQL/MariaDB server, e.g. mariadb1011')
    .option('--postgresql <engine>', 'declared facts: the PostgreSQL server, e.g. postgresql15')
    .action(async (name: string, ip: string, o: AddServerOptions) =>
      print(
        await client().createServer({
          name,
          ip,
          connection: o.connection as Schemas['CreateServerRequest']['connection'],
          sshPort: Number(o.sshPort),
          sshUser: o.sshUser,
          ...declaredFacts(o),
        }),
        serverDetails,
      ),
    );
  servers.command('verify <server>').action(async (s: string) => {
    const api = client();
    print(await api.verifyServer(await resolveServer(api, s)), serverDetails);
  });
  servers.command('remove <server>').action(async (s: string) => {
    const api = client();
    print(await api.deleteServer(await resolveServer(api, s)));
  });
  servers.command('add-user <server> <username>').action(async (s: string, u: string) => {
    const api = client();
    print(await api.createServerUser(await resolveServer(api, s), u), (user) => userTable([user]));
  });
  servers.command('users <server>').action(async (s: string) => {
    const api = client();
    print(await api.listServerUsers(await resolveServer(api, s)), userTable);
  });
}
