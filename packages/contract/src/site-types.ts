/**
 * The one table of application types (spec §2.1, §2.5, §8). Validation reads it now;
 * provisioning recipes read it later. Canonical ids are ARCHITECTURE §2 "Type strings".
 */

export type Runtime = 'php' | 'node' | 'static' | 'proxy';
export type DatabaseFamily = 'mysql' | 'postgresql';

export interface SiteTypeSpec {
  id: SiteTypeId;
  displayName: string;
  runtime: Runtime;
  /** 'optional': shouldCreateDatabaseAndUser decides; 'always': WordPress; 'user-only': phpMyAdmin; 'none'. */
  database: 'none' | 'optional' | 'always' | 'user-only';
  /** Families this type may use, the first being the default when none is installed (spec §4.1 rule 5). */
  databaseFamilies: readonly DatabaseFamily[];
  /** Allowed `site_type_version` values, newest last; empty when the type has none. */
  typeVersions: readonly number[];
  onePerServer: boolean;
  wildcardAllowed: boolean;
  /** Option names (besides the database ones) this type accepts. */
  options: readonly string[];
  /** Options that must be present. */
  requiredOptions: readonly string[];
  /** Node types whose software needs a minimum Node (unset: any Node the spec allows). */
  node?: NodeRequirement;
}

/**
 * The lowest Node major a type runs on: a number for every site_type_version, or one per version
 * (a version missing from the record has none). Taken from the `engines.node` of the newest
 * release of the major that Siteplane installs or that the spec names (each entry says which).
 */
export interface NodeRequirement {
  minimumMajor: number | Readonly<Partial<Record<number, number>>>;
  /**
   * Whether an installed Node below the minimum may be replaced by a newer one. The server has one
   * Node (spec §2.2, §8) that its other sites use too; the spec allows the upgrade for Adonis only.
   */
  upgradesInstalled: boolean;
}

export const SITE_TYPE_IDS = [
  'laravel',
  'php',
  'wordpress',
  'phpmyadmin',
  'adonis',
  'nuxt-ssr',
  'nuxt-static',
  'next-ssr',
  'nodejs-ssr',
  'nodejs-static',
  'strapi',
  'directus',
  'generic-port',
  'soketi',
  'static-html',
] as const;
export type SiteTypeId = (typeof SITE_TYPE_IDS)[number];

export const DATABASE_OPTION_NAMES = [
  'shouldCreateDatabaseAndUser',
  'database',
  'databaseUser',
  'databasePassword',
  'useCachingSha2Password',
  'preferredDbServer',
] as const;

const NODE_BUILD = ['nodejsVersion', 'buildCommand'] as const;

function type(spec: Omit<SiteTypeSpec, 'requiredOptions'> & { requiredOptions?: readonly string[] }): SiteTypeSpec {
  return { requiredOptions: [], ...spec };
}

export const SITE_TYPES: Readonly<Record<SiteTypeId, SiteTypeSpec>> = {
  laravel: type({
    id: 'laravel',
    displayName: 'Laravel',
    runtime: 'php',
    database: 'optional',
    databaseFamilies: ['mysql', 'postgresql'],
    typeVersions: [],
    onePerServer: false,
    wildcardAllowed: true,
    options: ['phpVersion', 'enableCache', 'webDirectory'],
  }),
  php: type({
    id: 'php',
    displayName: 'PHP',
    runtime: 'php',
    database: 'optional',
    databaseFamilies: ['mysql', 'postgresql'],
    typeVersions: [],
    onePerServer: false,
    wildcardAllowed: true,
    options: ['phpVersion', 'webDirectory'],
  }),
  wordpress: type({
    id: 'wordpress',
    displayName: 'WordPress',
    runtime: 'php',
    database: 'always',
    databaseFamilies: ['mysql'],
    typeVersions: [],
    onePerServer: false,
    wildcardAllowed: true,
    options: ['phpVersion', 'performInstallSetup', 'wpAdminSetup'],
  }),
  phpmyadmin: type({
    id: 'phpmyadmin',
    displayName: 'phpMyAdmin',
    runtime: 'php',
    database: 'user-only',
    databaseFamilies: ['mysql'],
    typeVersions: [],
    onePerServer: true,
    wildcardAllowed: false,
    options: ['phpVersion'],
  }),
  adonis: type({
    id: 'adonis',
    displayName: 'Adonis',
    runtime: 'node',
    database: 'optional',
    databaseFamilies: ['postgresql'],
    typeVersions: [5, 6, 7],
    onePerServer: false,
    wildcardAllowed: true,
    options: [...NODE_BUILD],
    // Spec §2.5 (6 → 20.x, 7 → 24.x); @adonisjs/core 6.21.0 engines ">=20.6.0", 7.5.2 ">=24.0.0".
    node: { minimumMajor: { 6: 20, 7: 24 }, upgradesInstalled: true },
  }),
  'nuxt-ssr': type({
    id: 'nuxt-ssr',
    displayName: 'Nuxt SSR',
    runtime: 'node',
    database: 'none',
    databaseFamilies: [],
    typeVersions: [2, 3, 4],
    onePerServer: false,
    wildcardAllowed: true,
    options: [...NODE_BUILD],
    // nuxt 3.21.11 engines "^20.19.0 || >=22.12.0"; nuxt 4.5.2 "^22.19.0 || ^24.11.0 || >=26.0.0".
    node: { minimumMajor: { 3: 20, 4: 22 }, upgradesInstalled: false },
  }),
  'nuxt-static': type({
    id: 'nuxt-static',
    displayName: 'Nuxt Static',
    runtime: 'node',
    database: 'none',
    databaseFamilies: [],
    typeVersions: [2, 3, 4],
    onePerServer: false,
    wildcardAllowed: true,
    options: [...NODE_BUILD],
    // nuxt 3.21.11 engines "^20.19.0 || >=22.12.0"; nuxt 4.5.2 "^22.19.0 || ^24.11.0 || >=26.0.0".
    node: { minimumMajor: { 3: 20, 4: 22 }, upgradesInstalled: false },
  }),
  'next-ssr': type({
    id: 'next-ssr',
    displayName: 'Next SSR',
    runtime: 'node',
    database: 'none',
    databaseFamilies: [],
    typeVersions: [],
    onePerServer: false,
    wildcardAllowed: true,
    options: [...NODE_BUILD],
    // next 15.5.29 engines "^18.18.0 || ^19.8.0 || >= 20.0.0".
    node: { minimumMajor: 18, upgradesInstalled: false },
  }),
  'nodejs-ssr': type({
    id: 'nodejs-ssr',
    displayName: 'NodeJS SSR',
    runtime: 'node',
    database: 'none',
    databaseFamilies: [],
    typeVersions: [],
    onePerServer: false,
    wildcardAllowed: true,
    options: [...NODE_BUILD, 'artifactPath'],
  }),
  'nodejs-static': type({
    id: 'nodejs-static',
    displayName: 'NodeJS Static',
    runtime: 'node',
    database: 'none',
    databaseFamilies: [],
    typeVersions: [],
    onePerServer: false,
    wildcardAllowed: true,
    options: [...NODE_BUILD, 'artifactPath'],
    requiredOptions: ['artifactPath'],
  }),
  strapi: type({
    id: 'strapi',
    displayName: 'Strapi',
    runtime: 'node',
    database: 'optional',
    databaseFamilies: ['postgresql'],
    typeVersions: [3, 4, 5],
    onePerServer: false,
    wildcardAllowed: true,
    options: [...NODE_BUILD],
    // @strapi/strapi 4.25.x engines ">=18.0.0 <=20.x.x"; 5.55.1 and create-strapi-app 5.55.0 ">=20.0.0 <=26.x.x".
    node: { minimumMajor: { 4: 18, 5: 20 }, upgradesInstalled: false },
  }),
  directus: type({
    id: 'directus',
    displayName: 'Directus',
    runtime: 'node',
    database: 'optional',
    databaseFamilies: ['postgresql'],
    typeVersions: [10, 11],
    onePerServer: false,
    wildcardAllowed: true,
    options: ['nodejsVersion', 'directusReleaseType'],
    // directus 10.13.4 engines ">=18.0.0"; 11.17.4 ">=22".
    node: { minimumMajor: { 10: 18, 11: 22 }, upgradesInstalled: false },
  }),
  'generic-port': type({
    id: 'generic-port',
    displayName: 'Generic Port',
    runtime: 'proxy',
    database: 'none',
    databaseFamilies: [],
    typeVersions: [],
    onePerServer: false,
    wildcardAllowed: true,
    options: ['port'],
    requiredOptions: ['port'],
  }),
  soketi: type({
    id: 'soketi',
    displayName: 'Soketi',
    runtime: 'node',
    database: 'none',
    databaseFamilies: [],
    typeVersions: [],
    onePerServer: true,
    wildcardAllowed: false,
    options: ['nodejsVersion'],
  }),
  'static-html': type({
    id: 'static-html',
    displayName: 'Static HTML',
    runtime: 'static',
    database: 'none',
    databaseFamilies: [],
    typeVersions: [],
    onePerServer: false,
    wildcardAllowed: true,
    options: ['webDirectory'],
  }),
};

const BY_NAME = new Map<string, SiteTypeId>();
for (const spec of Object.values(SITE_TYPES)) {
  for (const name of [spec.id, spec.displayName, spec.displayName.replace(/\s+/g, ''), spec.id.replace(/-/g, '_')]) {
    BY_NAME.set(name.toLowerCase(), spec.id);
  }
}

/** Canonical id for a canonical id or a spec display name, case-insensitive; undefined when unknown. */
export function normaliseSiteType(value: string): SiteTypeId | undefined {
  return BY_NAME.get(value.trim().toLowerCase());
}

export const PHP_VERSIONS = ['8.5', '8.4', '8.3', '8.2', '8.1', '8.0', '7.4', '7.3', '7.2'] as const;
export const NODE_VERSIONS = ['24.x', '22.x', '20.x', '18.x', '16.x', '14.x', '12.x'] as const;
export const SSL_PROVIDERS = ['letsencrypt', 'zerossl'] as const;
export const DNS_PROVIDERS = ['cloudflare', 'digitalocean', 'porkbun', 'aws'] as const;
export const DIRECTUS_RELEASE_TYPES = ['patch', 'minor'] as const;

/** spec §2.4, newest first per family. */
export const DB_SERVERS = [
  'mysql82',
  'mysql80',
  'mysql57',
  'mariadb1011',
  'mariadb1010',
  'mariadb107',
  'mariadb106',
  'mariadb104',
  'mariadb102',
  'postgresql17',
  'postgresql15',
  'postgresql14',
  'postgresql13',
  'postgresql12',
] as const;
export type DbServer = (typeof DB_SERVERS)[number];

export function dbServerFamily(server: DbServer): DatabaseFamily {
  return server.startsWith('postgresql') ? 'postgresql' : 'mysql';
}

/**
 * The name of an installed database engine: the spec's preferredDbServer vocabulary (§2.4)
 * extended to every version by its own pattern, so that facts describe what a server really has
 * (Debian 13's MariaDB 11.8 is `mariadb118`, PostgreSQL 16 `postgresql16`) and rule 5 compares
 * versions truthfully. MySQL and MariaDB: family, major, minor; PostgreSQL: family, major.
 * Only DB_SERVERS are accepted as preferredDbServer.
 */
export type DbEngine = `mysql${number}` | `mariadb${number}` | `postgresql${number}`;

export const DB_ENGINE_PATTERN: Record<DatabaseFamily, string> = {
  mysql: '^(mysql|mariadb)[1-9][0-9]{1,3}$',
  postgresql: '^postgresql[1-9][0-9]?$',
};

/** An engine's name from its product and version (`mariadb`, 11, 8 → `mariadb118`). */
export function dbEngineName(product: 'mysql' | 'mariadb' | 'postgresql', major: number, minor = 0): DbEngine {
  // `${major}${minor}` is one number in the name (11, 8 → 118).
  return product === 'postgresql' ? `postgresql${major}` : `${product}${Number(`${major}${minor}`)}`;
}

/** The engine's family, or null when the string is no engine name. */
export function dbEngineFamily(engine: string): DatabaseFamily | null {
  if (new RegExp(DB_ENGINE_PATTERN.postgresql).test(engine)) return 'postgresql';
  return new RegExp(DB_ENGINE_PATTERN.mysql).test(engine) ? 'mysql' : null;
}

/** What is installed when a family is needed and none is there (spec §4.1 rule 5). */
export const DEFAULT_DB_SERVER: Record<DatabaseFamily, DbServer> = {
  mysql: 'mysql80',
  postgresql: 'postgresql13',
};

/** The lowest Node major a site of this type and site_type_version runs on (its table entry's `node`). */
export function minimumNodeMajor(type: SiteTypeId, typeVersion: number | undefined): number | undefined {
  const minimum = SITE_TYPES[type].node?.minimumMajor;
  if (typeof minimum === 'number' || minimum === undefined) return minimum;
  return typeVersion === undefined ? undefined : minimum[typeVersion];
}

/** Whether an installed Node too old for this type may be upgraded (spec §2.2: Adonis 6 and 7 only). */
export function upgradesInstalledNode(type: SiteTypeId): boolean {
  return SITE_TYPES[type].node?.upgradesInstalled ?? false;
}
