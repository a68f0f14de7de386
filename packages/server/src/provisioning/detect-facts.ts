import { type DbEngine, dbEngineName, PHP_VERSIONS } from '@siteplane/contract';
import type { ServerFacts } from '../domain/servers/facts.js';
import { CommandFailed, type Executor } from './executor.js';

/**
 * Reads what a server has installed in ONE round trip: a fixed script (no input reaches it) prints
 * sections that parseFacts reads. Sources, in order of trust:
 *   os        /etc/os-release (ID VERSION_ID, e.g. `debian 12`)
 *   php       versioned binaries /usr/bin/phpX.Y, /usr/sbin/php-fpmX.Y (not /etc/php/*, which a purge
 *             leaves behind); `php -v` only where no versioned binary exists (non-Debian layouts)
 *   mysql     the server binary (mariadbd / mysqld --version): a client alone is no engine
 *   postgres  online clusters (pg_lsclusters), else installed server binaries, else `postgres --version`
 *             — never psql alone, which is only a client
 *   pm2       version from its package.json: running `pm2` may start its daemon
 * sbin directories are added to PATH because non-root SSH users do not have them.
 */
export const FACTS_SCRIPT = String.raw`PATH="$PATH:/usr/local/sbin:/usr/sbin:/sbin"
s() { printf '\n@@siteplane:%s\n' "$1"; }
s os; cat /etc/os-release 2>/dev/null
s arch; uname -m 2>/dev/null
s php; found=
for f in /usr/bin/php[0-9]* /usr/sbin/php-fpm[0-9]*; do [ -x "$f" ] && echo "$f" && found=1; done
[ -n "$found" ] || php -v 2>/dev/null | head -n 1
s node; node -v 2>/dev/null || nodejs -v 2>/dev/null
s mysql; for b in mariadbd mysqld; do command -v "$b" >/dev/null 2>&1 && "$b" --version 2>/dev/null && break; done
s postgresql; pg_lsclusters -h 2>/dev/null; ls -d /usr/lib/postgresql/*/bin/postgres /usr/pgsql-*/bin/postgres 2>/dev/null
command -v postgres >/dev/null 2>&1 && postgres --version 2>/dev/null
s nginx; command -v nginx >/dev/null 2>&1 && nginx -v 2>&1
s pm2; p=$(command -v pm2 2>/dev/null) && grep -m 1 '"version"' "$(dirname "$(readlink -f "$p")")/../package.json" 2>/dev/null
s end
exit 0
`;

export async function detectFacts(exec: Executor): Promise<ServerFacts> {
  const argv = ['sh', '-c', FACTS_SCRIPT];
  const result = await exec.run(argv, { timeoutMs: 60_000 });
  if (result.code !== 0 || !result.stdout.includes('@@siteplane:end')) throw new CommandFailed(argv, result);
  return parseFacts(result.stdout);
}

export function parseFacts(output: string): ServerFacts {
  const sections = splitSections(output);
  const section = (name: string) => sections.get(name) ?? [];
  return {
    os: parseOs(section('os')),
    arch: section('arch')[0] ?? null,
    php: parsePhp(section('php')),
    node: firstMatch(section('node'), /^v?(\d+\.\d+\.\d+)/),
    mysql: parseMysql(section('mysql')),
    postgresql: parsePostgres(section('postgresql')),
    nginx: firstMatch(section('nginx'), /nginx\/(\d+(?:\.\d+)+)/),
    pm2: firstMatch(section('pm2'), /"version"\s*:\s*"([^"]+)"/),
  };
}

function splitSections(output: string): Map<string, string[]> {
  const sections = new Map<string, string[]>();
  let current: string[] | null = null;
  for (const raw of output.split('\n')) {
    const line = raw.trim();
    const marker = /^@@siteplane:(\w+)$/.exec(line);
    if (marker) {
      current = [];
      sections.set(marker[1]!, current);
    } else if (current && line !== '') current.push(line);
  }
  return sections;
}

function firstMatch(lines: string[], pattern: RegExp): string | null {
  for (const line of lines) {
    const match = pattern.exec(line);
    if (match) return match[1]!;
  }
  return null;
}

function parseOs(lines: string[]): string | null {
  const fields = new Map<string, string>();
  for (const line of lines) {
    const match = /^([A-Z_]+)=(.*)$/.exec(line);
    if (match) fields.set(match[1]!, match[2]!.replace(/^(["'])(.*)\1$/, '$2'));
  }
  const id = fields.get('ID');
  const version = fields.get('VERSION_ID');
  if (id && version) return `${id} ${version}`;
  return id ?? fields.get('PRETTY_NAME') ?? null;
}

/** Versions Siteplane knows (the facts schema allows no others), newest first. */
function parsePhp(lines: string[]): string[] {
  const found = new Set<string>();
  for (const line of lines) {
    const match = /\/php(?:-fpm)?(\d+\.\d+)$/.exec(line) ?? /^PHP (\d+\.\d+)\./.exec(line);
    if (match) found.add(match[1]!);
  }
  return PHP_VERSIONS.filter((version) => found.has(version));
}

/**
 * Engines are named by their own version (`mariadb118` for MariaDB 11.8, `postgresql16`), never by
 * the nearest name of the spec's vocabulary: rule 5 compares a preferredDbServer with this name,
 * and a neighbour's name would accept a version the server has not got (or reuse one under a
 * name that is not its own). The vocabulary's names come out unchanged (10.11 → mariadb1011).
 */
function parseMysql(lines: string[]): DbEngine | null {
  for (const line of lines) {
    // `mariadbd  Ver 10.11.6-MariaDB-0+deb12u1 for …`, `mysqld  Ver 8.0.36-0ubuntu0.22.04.1 for …`
    const match = /\bVer (\d+)\.(\d+)\.\d+(\S*)/.exec(line);
    if (!match) continue;
    return dbEngineName(/mariadb/i.test(line) ? 'mariadb' : 'mysql', Number(match[1]), Number(match[2]));
  }
  return null;
}

function parsePostgres(lines: string[]): DbEngine | null {
  const online: number[] = [];
  const installed: number[] = [];
  for (const line of lines) {
    const cluster = /^(\d+)\s+\S+\s+\d+\s+(\S+)/.exec(line);
    const binary = /\/postgresql\/(\d+)\/bin\/postgres$/.exec(line) ?? /\/pgsql-(\d+)\/bin\/postgres$/.exec(line);
    const version = /^postgres \(PostgreSQL\) (\d+)/.exec(line);
    if (cluster) (cluster[2]!.startsWith('online') ? online : installed).push(Number(cluster[1]));
    else if (binary) installed.push(Number(binary[1]));
    else if (version) installed.push(Number(version[1]));
  }
  const major = Math.max(...(online.length > 0 ? online : installed));
  return Number.isFinite(major) ? dbEngineName('postgresql', major) : null;
}
