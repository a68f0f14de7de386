import { createHash, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import { mustRun, run } from './host.js';

/**
 * The databases of the server as an operator checks them: MariaDB as root over its socket,
 * PostgreSQL as the postgres superuser, and logins as the sites' users with their passwords
 * (argv and environment only, so hostile passwords arrive literally).
 */

// --- MariaDB ----------------------------------------------------------------------------------

/** Runs SQL as MariaDB's root over the server's socket (root authenticates by unix_socket). */
export async function mysqlRoot(sql: string): Promise<string[][]> {
  const result = await mustRun('mariadb', ['--batch', '--skip-column-names'], { input: sql });
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('\t'));
}

const SAFE_NAME = /^[A-Za-z0-9_$]+$/;
function literal(name: string): string {
  if (!SAFE_NAME.test(name)) throw new Error(`unexpected name ${name}`);
  return `'${name}'`;
}

export async function mysqlDatabaseExists(name: string): Promise<boolean> {
  const rows = await mysqlRoot(`SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ${literal(name)};`);
  return rows.length === 1;
}

export async function mysqlUserHosts(user: string): Promise<string[]> {
  const rows = await mysqlRoot(`SELECT Host FROM mysql.user WHERE User = ${literal(user)} ORDER BY Host;`);
  return rows.map((r) => r[0] ?? '');
}

/**
 * Logs in as user with password (over TCP to 127.0.0.1 and over the socket) and returns
 * CURRENT_USER() and the databases it sees; null when the login is refused.
 */
export async function mysqlLogin(
  user: string,
  password: string,
  via: 'tcp' | 'socket' = 'tcp',
): Promise<{ currentUser: string; databases: string[] } | null> {
  const result = await run(
    'mariadb',
    [
      '--no-defaults',
      ...(via === 'tcp' ? ['--protocol=TCP', '-h', '127.0.0.1', '-P', '3306'] : ['--protocol=SOCKET']),
      '-u',
      user,
      `--password=${password}`,
      '--batch',
      '--skip-column-names',
    ],
    { input: 'SELECT CURRENT_USER();\nSHOW DATABASES;\n' },
  );
  if (result.code !== 0) return null;
  const [currentUser = '', ...databases] = result.stdout.split('\n').filter(Boolean);
  return { currentUser, databases };
}

/** Drops a database and user that a test's site kept on purpose (deleted without deleteDatabase). */
export async function mysqlDrop(database: string | null, user: string | null): Promise<void> {
  const sql = [
    database ? `DROP DATABASE IF EXISTS \`${database.replace(/[^A-Za-z0-9_$]/g, '')}\`;` : '',
    user ? `DROP USER IF EXISTS ${literal(user)}@'localhost', ${literal(user)}@'127.0.0.1';` : '',
  ].join('\n');
  await mysqlRoot(sql);
}

// --- PostgreSQL -------------------------------------------------------------------------------

/** SQL as the postgres superuser, over the server's socket with peer authentication. */
export async function psqlAdmin(sql: string): Promise<string[][]> {
  const result = await mustRun('runuser', ['-u', 'postgres', '--', 'psql', '-X', '-q', '-A', '-t', '-d', 'postgres'], {
    input: sql,
  });
  return result.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split('|'));
}

export async function pgRole(role: string): Promise<{ canLogin: boolean; secret: string } | null> {
  const rows = await psqlAdmin(`SELECT rolcanlogin, coalesce(rolpassword, '') FROM pg_authid WHERE rolname = ${literal(role)};`);
  const row = rows[0];
  return row ? { canLogin: row[0] === 't', secret: row[1] ?? '' } : null;
}

export async function pgDatabaseOwner(database: string): Promise<string | null> {
  const rows = await psqlAdmin(`SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = ${literal(database)};`);
  return rows[0]?.[0] ?? null;
}

/** psql with PGPASSWORD over 127.0.0.1, as an application would connect; returns current_user or null. */
export async function pgLogin(user: string, password: string, database: string): Promise<string | null> {
  const result = await run(
    'psql',
    ['-X', '-q', '-A', '-t', '-w', '-h', '127.0.0.1', '-U', user, '-d', database, '-c', 'SELECT current_user'],
    { env: { PGPASSWORD: password } },
  );
  return result.code === 0 ? result.stdout.trim() : null;
}

/**
 * Whether the stored verifier (pg_authid.rolpassword) is the one for exactly this password.
 * This machine's pg_hba trusts 127.0.0.1, so a login alone proves nothing about the password; the
 * SCRAM-SHA-256 verifier does (RFC 5802/7677: StoredKey = H(HMAC(SaltedPassword, "Client Key"))).
 * ASCII passwords only (SASLprep leaves them as they are).
 */
export function pgVerifierMatches(secret: string, password: string, role: string): boolean {
  const scram = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(secret);
  if (scram) {
    const [, iterations, salt, storedKey, serverKey] = scram as unknown as [string, string, string, string, string];
    const salted = pbkdf2Sync(password, Buffer.from(salt, 'base64'), Number(iterations), 32, 'sha256');
    const clientKey = createHmac('sha256', salted).update('Client Key').digest();
    const stored = createHash('sha256').update(clientKey).digest();
    const server = createHmac('sha256', salted).update('Server Key').digest();
    return timingSafeEqual(stored, Buffer.from(storedKey, 'base64')) && timingSafeEqual(server, Buffer.from(serverKey, 'base64'));
  }
  if (secret.startsWith('md5'))
    return (
      secret ===
      `md5${createHash('md5')
        .update(password + role)
        .digest('hex')}`
    );
  return false;
}

export async function pgDrop(database: string | null, role: string | null): Promise<void> {
  if (database) await psqlAdmin(`DROP DATABASE IF EXISTS "${database.replace(/[^A-Za-z0-9_$]/g, '')}" WITH (FORCE);`);
  if (role) await psqlAdmin(`DROP ROLE IF EXISTS "${role.replace(/[^A-Za-z0-9_]/g, '')}";`);
}

export async function pgDatabaseExists(name: string): Promise<boolean> {
  return (await psqlAdmin(`SELECT 1 FROM pg_database WHERE datname = ${literal(name)};`)).length === 1;
}
