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

/** What is installed when a family is needed and none is there (spec §4.1 rule 5). */
export const DEFAULT_DB_SERVER: Record<DatabaseFamily, DbServer> = {
  mysql: 'mysql80',
  postgresql: 'postgresql13',
};

/** Minimum Node major per type and site_type_version (spec §2.5: Adonis 6 → 20.x, 7 → 24.x). */
export function minimumNodeMajor(type: SiteTypeId, typeVersion: number | undefined): number | undefined {
  if (type === 'adonis' && typeVersion === 6) return 20;
  if (type === 'adonis' && typeVersion === 7) return 24;
  return undefined;
}
