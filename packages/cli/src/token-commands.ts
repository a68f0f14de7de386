import type { openStorage } from '@siteplane/server/storage';
import type { Command } from 'commander';
import { paint, print } from './output.js';
import { table } from './table.js';

type Db = Awaited<ReturnType<typeof openStorage>>['db'];
/** The server's storage and token code, loaded on use: the API commands start without them. */
const tokens = () => import('@siteplane/server/tokens');

async function withDb<T>(fn: (db: Db) => Promise<T>): Promise<T> {
  const { loadConfig, sqliteFile } = await import('@siteplane/server/config');
  const { openStorage } = await import('@siteplane/server/storage');
  const config = loadConfig();
  const storage = await openStorage({ databaseUrl: config.databaseUrl, sqliteFile: sqliteFile(config) });
  try {
    return await fn(storage.db);
  } finally {
    await storage.close();
  }
}

/** Local admin commands on the same database as `serve` (no running service needed). */
export function tokenCommands(program: Command): void {
  const token = program.command('token').description('API tokens');
  token
    .command('create')
    .requiredOption('--name <name>', 'what the token is for')
    .option('--scope <scope>', 'read or write', 'write')
    .option('--team <team>', 'limit the token to this team (created if missing)')
    .option('--account <account>', 'account (created if missing)', 'default')
    .description('Create a token and print it (only the token; it is shown once)')
    .action(async (o: { name: string; scope: string; team?: string; account: string }) => {
      if (o.scope !== 'read' && o.scope !== 'write') throw new Error('--scope must be read or write');
      const created = await withDb(async (db) =>
        (await tokens()).createToken(db, { name: o.name, scope: o.scope as 'read' | 'write', team: o.team, account: o.account }),
      );
      process.stdout.write(`${created.token}\n`);
    });
  token
    .command('list')
    .description('List tokens (never their secret)')
    .action(async () => {
      const rows = await withDb(async (db) => (await tokens()).listTokens(db));
      print(rows, (tokens) =>
        table(
          [
            { header: 'NAME', value: (t) => t.name },
            { header: 'SCOPE', value: (t) => t.scope },
            { header: 'TEAM', value: (t) => t.team ?? paint('dim', 'all (global)') },
            { header: 'ACCOUNT', value: (t) => t.account },
            { header: 'CREATED', value: (t) => String(t.created_at).replace('T', ' ').slice(0, 19) },
            { header: 'REVOKED', value: (t) => (t.revoked_at ? String(t.revoked_at).replace('T', ' ').slice(0, 19) : null) },
            { header: 'UUID', value: (t) => t.uuid },
          ],
          tokens,
          'No tokens yet: siteplane token create --name <name>',
        ),
      );
    });
  token
    .command('revoke <uuidOrName>')
    .description('Revoke a token by uuid or name')
    .action(async (which: string) => {
      const n = await withDb(async (db) => (await tokens()).revokeToken(db, which));
      if (n === 0) throw new Error('no such active token');
      process.stdout.write(`revoked ${n}\n`);
    });
}
