import { type DbServer, dbServerFamily } from '@siteplane/contract';
import type { AptSource } from '../apt.js';

/**
 * How each engine of the spec's preferredDbServer vocabulary (§2.4) is installed on Debian.
 * `distroVersion` matches the version Debian's own package must have to be used; otherwise the
 * vendor's repository is added. Engines with no source for current Debian say why.
 */
export interface EngineSource {
  engine: DbServer;
  family: 'mysql' | 'postgresql';
  /** Package whose presence means "installed", and what to install. */
  packages: string[];
  distroPackage: string;
  distroVersion: RegExp | null;
  repository: ((codename: string) => AptSource) | null;
  unit: string;
  initScript: string;
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

function mysql(engine: DbServer, series: string | null): EngineSource {
  return {
    engine,
    family: 'mysql',
    packages: ['mysql-server'],
    distroPackage: 'mysql-server',
    distroVersion: null,
    repository: series ? mysqlRepo(series) : null,
    unit: 'mysql',
    initScript: '/etc/init.d/mysql',
    ...(series ? {} : { unavailable: `${engine} is not published for current Debian releases; use mysql80` }),
  };
}

function mariadb(engine: DbServer, version: string, supported: boolean): EngineSource {
  return {
    engine,
    family: 'mysql',
    packages: ['mariadb-server'],
    distroPackage: 'mariadb-server',
    distroVersion: new RegExp(`^(\\d+:)?${version.replace('.', '\\.')}\\.`),
    repository: supported ? mariadbRepo(version) : null,
    unit: 'mariadb',
    initScript: '/etc/init.d/mariadb',
    ...(supported
      ? {}
      : {
          unavailable: `MariaDB ${version} reached its end of life and has no packages for current Debian; use mariadb1011 or mariadb106`,
        }),
  };
}

function postgresql(engine: DbServer, major: string): EngineSource {
  return {
    engine,
    family: 'postgresql',
    packages: [`postgresql-${major}`],
    distroPackage: `postgresql-${major}`,
    distroVersion: /./,
    repository: pgdgRepo,
    unit: 'postgresql',
    initScript: '/etc/init.d/postgresql',
  };
}

export const ENGINE_SOURCES: Record<DbServer, EngineSource> = {
  mysql82: mysql('mysql82', null),
  mysql80: mysql('mysql80', 'mysql-8.0'),
  mysql57: mysql('mysql57', null),
  mariadb1011: mariadb('mariadb1011', '10.11', true),
  mariadb1010: mariadb('mariadb1010', '10.10', false),
  mariadb107: mariadb('mariadb107', '10.7', false),
  mariadb106: mariadb('mariadb106', '10.6', true),
  mariadb104: mariadb('mariadb104', '10.4', false),
  mariadb102: mariadb('mariadb102', '10.2', false),
  postgresql17: postgresql('postgresql17', '17'),
  postgresql15: postgresql('postgresql15', '15'),
  postgresql14: postgresql('postgresql14', '14'),
  postgresql13: postgresql('postgresql13', '13'),
  postgresql12: postgresql('postgresql12', '12'),
};

export function engineSource(engine: DbServer): EngineSource {
  const source = ENGINE_SOURCES[engine];
  if (source.family !== dbServerFamily(engine)) throw new Error(`engine table disagrees with the contract about ${engine}`);
  return source;
}
