import { type DbEngine, type DbServer, dbEngineFamily } from '@siteplane/contract';
import type { AptSource } from '../apt.js';

/**
 * How each engine of the spec's preferredDbServer vocabulary (§2.4), and each engine a supported
 * distribution ships outside it, is installed on Debian. `distroVersion` matches the version
 * Debian's own package must have to be used; otherwise the vendor's repository is added. Engines
 * with no source for current Debian say why. The one place that knows packages and repositories
 * of engines: the create rules ask it through engine-offer.ts.
 */
export interface EngineSource {
  engine: DbEngine;
  family: 'mysql' | 'postgresql';
  /** Package whose presence means "installed", and what to install. */
  packages: string[];
  distroPackage: string;
  distroVersion: RegExp | null;
  repository: ((codename: string) => AptSource) | null;
  unit: string;
  initScript: string;
  /** Facts `os` values (`debian 12`) whose own package archive has this version. */
  distributions: readonly string[];
  /** Set when Siteplane cannot install this engine; the step fails with this reason. */
  unavailable?: string;
}

const mysqlRepo =
  (series: string) =>
  (codename: string): AptSource => ({
    name: 'mysql',
    keyUrl: 'https://repo.mysql.com/RPM-GPG-KEY-mysql-2023',
    keyFormat: 'asc',
    uri: 'https://repo.mysql.com/apt/debian/',
    suite: codename,
    components: series,
  });

const mariadbRepo =
  (version: string) =>
  (codename: string): AptSource => ({
    name: 'mariadb',
    keyUrl: 'https://supplychain.mariadb.com/mariadb-keyring-2019.gpg',
    keyFormat: 'gpg',
    uri: `https://dlm.mariadb.com/repo/mariadb-server/${version}/repo/debian`,
    suite: codename,
    components: 'main',
  });

const pgdgRepo = (codename: string): AptSource => ({
  name: 'pgdg',
  keyUrl: 'https://www.postgresql.org/media/keys/ACCC4CF8.asc',
  keyFormat: 'asc',
  uri: 'https://apt.postgresql.org/pub/repos/apt',
  suite: `${codename}-pgdg`,
  components: 'main',
});

function mysql(engine: DbEngine, series: string | null): EngineSource {
  return {
    engine,
    family: 'mysql',
    packages: ['mysql-server'],
    distroPackage: 'mysql-server',
    distroVersion: null,
    repository: series ? mysqlRepo(series) : null,
    unit: 'mysql',
    initScript: '/etc/init.d/mysql',
    // Debian ships no MySQL server since 9 (its default-mysql-server is MariaDB).
    distributions: [],
    ...(series ? {} : { unavailable: `${engine} is not published for current Debian releases; use mysql80` }),
  };
}

function mariadb(engine: DbEngine, version: string, supported: boolean, distributions: string[] = []): EngineSource {
  return {
    engine,
    family: 'mysql',
    packages: ['mariadb-server'],
    distroPackage: 'mariadb-server',
    distroVersion: new RegExp(`^(\\d+:)?${version.replace('.', '\\.')}\\.`),
    repository: supported ? mariadbRepo(version) : null,
    unit: 'mariadb',
    initScript: '/etc/init.d/mariadb',
    distributions,
    ...(supported
      ? {}
      : {
          unavailable: `MariaDB ${version} reached its end of life and has no packages for current Debian; use mariadb1011 or mariadb106`,
        }),
  };
}

function postgresql(engine: DbEngine, major: string, distributions: string[] = []): EngineSource {
  return {
    engine,
    family: 'postgresql',
    packages: [`postgresql-${major}`],
    distroPackage: `postgresql-${major}`,
    distroVersion: /./,
    repository: pgdgRepo,
    unit: 'postgresql',
    initScript: '/etc/init.d/postgresql',
    distributions,
  };
}

export const ENGINE_SOURCES: Record<DbServer, EngineSource> = {
  mysql82: mysql('mysql82', null),
  mysql80: mysql('mysql80', 'mysql-8.0'),
  mysql57: mysql('mysql57', null),
  mariadb1011: mariadb('mariadb1011', '10.11', true, ['debian 12']),
  mariadb1010: mariadb('mariadb1010', '10.10', false),
  mariadb107: mariadb('mariadb107', '10.7', false),
  mariadb106: mariadb('mariadb106', '10.6', true),
  mariadb104: mariadb('mariadb104', '10.4', false),
  mariadb102: mariadb('mariadb102', '10.2', false),
  postgresql17: postgresql('postgresql17', '17', ['debian 13']),
  postgresql15: postgresql('postgresql15', '15', ['debian 12']),
  postgresql14: postgresql('postgresql14', '14'),
  postgresql13: postgresql('postgresql13', '13'),
  postgresql12: postgresql('postgresql12', '12'),
};

/** Engines a supported distribution ships that §2.4 does not name: never requested, but defaults and reused. */
const DISTRIBUTION_ONLY: readonly EngineSource[] = [mariadb('mariadb118', '11.8', true, ['debian 13'])];

const TABLE = new Map<string, EngineSource>(
  [...Object.values(ENGINE_SOURCES), ...DISTRIBUTION_ONLY].map((source) => [source.engine, source]),
);

export function engineSource(engine: DbEngine): EngineSource {
  const source = TABLE.get(engine) ?? reuseOnly(engine);
  if (source.family !== dbEngineFamily(engine)) throw new Error(`engine table disagrees with the contract about ${engine}`);
  return source;
}

/** The engine of `family` that the distribution `os` (facts: `debian 12`) ships, if Siteplane knows one. */
export function distributionEngine(family: 'mysql' | 'postgresql', os: string): EngineSource | null {
  for (const source of TABLE.values()) if (source.family === family && shippedBy(source, os)) return source;
  return null;
}

/** Whether the distribution `os` ships this engine; declared facts may say `Debian 12`. */
export function shippedBy(source: EngineSource, os: string): boolean {
  return source.distributions.includes(os.trim().toLowerCase());
}

/**
 * An engine found on a server that the table does not list (MariaDB 11.4 installed by hand):
 * reused as it is — its package is checked and its service started — but never installed.
 */
function reuseOnly(engine: DbEngine): EngineSource {
  const unavailable = `${engine} is not in Siteplane's engine table: it is reused where installed, never installed`;
  if (engine.startsWith('postgresql')) return { ...postgresql(engine, engine.slice('postgresql'.length)), unavailable };
  if (engine.startsWith('mariadb')) return { ...mariadb(engine, '0.0', false), unavailable };
  return { ...mysql(engine, null), unavailable };
}
