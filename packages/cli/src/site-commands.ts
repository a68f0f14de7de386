import type { Schemas } from '@siteplane/sdk';
import type { Command } from 'commander';
import { client } from './config.js';
import { UsageError } from './errors.js';
import { follow } from './follow.js';
import { jsonObject, keyValues } from './input.js';
import { details, paint, print, statusText } from './output.js';
import { resolveServer, resolveServerUser, resolveSite } from './resolve.js';
import { table } from './table.js';

type Json = Record<string, unknown>;
const operationOf = (record: Json) => (record.operation as { uuid: string } | null)?.uuid;

const siteTable = (sites: Json[]) =>
  table(
    [
      { header: 'DOMAIN', value: (s) => s.domain },
      { header: 'TYPE', value: (s) => s.type },
      { header: 'STATUS', value: (s) => statusText(s.status) },
      { header: 'SSL', value: (s) => ((s.ssl as Json | null)?.enabled ? (s.ssl as Json).status : 'off') },
      { header: 'UUID', value: (s) => s.uuid },
    ],
    sites,
    'No sites on this server yet.',
  );

export const siteDetails = (s: Json): string => {
  const ssl = s.ssl as Json | null;
  const db = s.database as Json | null;
  const op = s.operation as Json | null;
  return details([
    ['Site', s.domain],
    ['UUID', s.uuid],
    ['Type', s.type],
    ['Status', statusText(s.status)],
    ['Server', s.server],
    ['User', s.server_user],
    ['SSL', ssl?.enabled ? `${ssl.provider ?? ''} ${statusText(ssl.status)}`.trim() : 'off'],
    ['Database', db ? `${db.name} (user ${db.user}, ${db.engine})` : null],
    ['Operation', op ? `${op.kind} ${statusText(op.status)} ${paint('dim', String(op.uuid))}` : null],
  ]);
};

/** After a create, delete or retry: the record, then, with --wait, the operation to its end. */
async function answered(record: Json, wait: boolean | undefined): Promise<void> {
  print(record, siteDetails);
  const op = operationOf(record);
  if (wait && op) await follow(op);
}

interface CreateFlags {
  server?: string;
  user?: string;
  php?: string;
  node?: string;
  database?: boolean;
  freeDomain?: boolean;
  ssl?: boolean;
  sslEmail?: string;
  option: string[];
  file?: string;
  idempotencyKey?: string;
  wait?: boolean;
}

/** The create body from flags, or the JSON given (argument, --file, stdin); server and user names become uuids. */
async function createBody(type: string | undefined, domain: string | undefined, o: CreateFlags): Promise<Json> {
  const api = client();
  const raw = o.file !== undefined || type?.trimStart().startsWith('{');
  const body: Json = raw
    ? await jsonObject(type, o.file)
    : {
        type,
        ...(domain ? { domain } : {}),
        ...(o.freeDomain ? { freeDomain: true } : {}),
        ...(o.ssl !== undefined ? { ssl: o.ssl } : {}),
        ...(o.sslEmail ? { sslEmail: o.sslEmail } : {}),
        options: {
          ...(o.php ? { phpVersion: o.php } : {}),
          ...(o.node ? { nodejsVersion: o.node } : {}),
          ...(o.database ? { shouldCreateDatabaseAndUser: true } : {}),
          ...keyValues(o.option),
        },
      };
  if (!raw && !type) throw new UsageError('Give the site type (laravel, php, wordpress, …) or a JSON body (--file)');
  if (o.server) body.server = o.server;
  if (o.user) body.serverUser = o.user;
  if (typeof body.server !== 'string') throw new UsageError('Give the server: --server <name or uuid>');
  if (typeof body.serverUser !== 'string') throw new UsageError('Give the server user: --user <username or uuid>');
  body.server = await resolveServer(api, body.server);
  body.serverUser = await resolveServerUser(api, body.server as string, body.serverUser);
  return body;
}

/** Sites: list, show, create (by flags or JSON), delete, retry, certificate; an operation's progress. */
export function siteCommands(program: Command): void {
  const sites = program.command('sites').description('Sites on servers');
  sites
    .command('list <server>')
    .description('Sites of a server (name or uuid)')
    .action(async (server: string) => {
      const api = client();
      print(await api.listSites(await resolveServer(api, server)), siteTable);
    });
  sites
    .command('get <site>')
    .description('One site (domain or uuid)')
    .action(async (site: string) => {
      const api = client();
      print(await api.getSite(await resolveSite(api, site)), siteDetails);
    });
  sites
    .command('create [type] [domain]')
    .description(
      'Create a site: `sites create laravel app.example.com --server demo --user deploy --php 8.2 --database`, ' +
        'or from a JSON body (spec §2.1) given as the argument, in a file, or on stdin (--file -)',
    )
    .option('--server <server>', 'server name or uuid')
    .option('--user <user>', 'server user: username or uuid')
    .option('--php <version>', 'PHP version (options.phpVersion)')
    .option('--node <version>', 'Node.js version (options.nodejsVersion)')
    .option('--database', 'create a database and its user (options.shouldCreateDatabaseAndUser)')
    .option('--free-domain', 'a temporary domain instead of one of yours')
    .option('--ssl', 'issue a certificate')
    .option('--no-ssl', 'no certificate')
    .option('--ssl-email <email>', 'contact address for the certificate authority')
    .option(
      '--option <key=value>',
      'any other option (repeatable): --option webDirectory=public',
      (v, all: string[]) => [...all, v],
      [],
    )
    .option('--file <path>', 'read the JSON body from this file (- for standard input)')
    .option('--idempotency-key <key>')
    .option('--wait', 'show each step as it runs; exit non-zero when the operation fails')
    .action(async (type: string | undefined, domain: string | undefined, o: CreateFlags) =>
      answered(
        await client().createSite((await createBody(type, domain, o)) as Schemas['CreateSiteRequest'], o.idempotencyKey),
        o.wait,
      ),
    );
  sites
    .command('delete <site>')
    .option('--delete-database', 'also drop the database and its user')
    .option('--wait', 'show each step as it runs')
    .action(async (site: string, o: { deleteDatabase?: boolean; wait?: boolean }) => {
      const api = client();
      await answered(await api.deleteSite(await resolveSite(api, site), o.deleteDatabase === true), o.wait);
    });
  sites
    .command('retry <site>')
    .description('Run a failed create or delete again; steps that already succeeded are checked, not redone')
    .option('--wait', 'show each step as it runs')
    .action(async (site: string, o: { wait?: boolean }) => {
      const api = client();
      await answered(await api.retrySite(await resolveSite(api, site)), o.wait);
    });
  sites
    .command('ssl <site>')
    .description('Issue or re-issue the certificate now (after fixing what ssl.error named)')
    .option('--wait', 'show each step as it runs')
    .action(async (site: string, o: { wait?: boolean }) => {
      const api = client();
      await answered(await api.retrySsl(await resolveSite(api, site)), o.wait);
    });

  program
    .command('operation <uuid>')
    .description('Steps and log of an operation; --wait follows it to its end')
    .option('--wait', 'show each step as it runs')
    .action(async (uuid: string, o: { wait?: boolean }) => {
      if (o.wait) return follow(uuid);
      print(await client().getOperation(uuid), (op) =>
        [
          details([
            ['Operation', op.uuid],
            ['Kind', op.kind],
            ['Status', statusText(op.status)],
          ]),
          '',
          table(
            [
              { header: '#', value: (s: Json) => Number(s.index) + 1 },
              { header: 'STEP', value: (s: Json) => s.name },
              { header: 'STATUS', value: (s: Json) => statusText(s.status) },
              { header: 'EXIT', value: (s: Json) => s.exit_code },
            ],
            op.steps as Json[],
            'No steps yet.',
          ),
        ].join('\n'),
      );
    });
}
