import type { SiteTypeId } from '@siteplane/contract';
import type { ProvisionedSite } from '../../../src/provisioning/step.js';

type Db = NonNullable<ProvisionedSite['database']>;

const mysqlDb = (engine: Db['engine'], installEngine: boolean, name: string | null, user: string): Db => ({
  createDatabase: name !== null,
  name,
  user,
  password: 'S3cret-pass',
  engine,
  installEngine,
  useCachingSha2Password: false,
});

const pgDb = (engine: Db['engine'], installEngine: boolean, name: string, user: string): Db => ({
  ...mysqlDb(engine, installEngine, name, user),
  engine,
});

/**
 * One site per type, as the create use case would plan it for a bare Debian 12 server. The
 * variety is deliberate: PHP from Debian (8.2) and from Sury (8.3), MariaDB from Debian, MySQL
 * and PostgreSQL 13 from their vendors' repositories, Node from Debian (18) and NodeSource.
 */
export function siteOf(type: SiteTypeId, overrides: Partial<ProvisionedSite> = {}): ProvisionedSite {
  const base: ProvisionedSite = {
    uuid: '0b6b7f36-6a8d-4c39-9d6a-3f1c2e5b8a10',
    type,
    domain: `${type}.example.com`,
    user: 'alice',
    options: {},
    ssl: { enabled: false, provider: null, wildcard: false, includeWww: false },
    database: null,
    runtime: {},
    port: null,
    secrets: {},
  };
  const php = (version: string) => ({ php: { version, install: true } });
  const node = (version: string, action: 'install' | 'reuse' | 'upgrade' = 'install') => ({ node: { version, action } });
  const byType: Record<SiteTypeId, Partial<ProvisionedSite>> = {
    laravel: { runtime: php('8.3'), options: {}, database: mysqlDb('mariadb1011', true, 'laravel_db', 'laravel_user') },
    php: { runtime: php('8.2'), options: { webDirectory: 'web' } },
    wordpress: {
      runtime: php('8.2'),
      options: {
        performInstallSetup: true,
        wpAdminSetup: { title: 'My blog', adminUser: 'admin', adminEmail: 'admin@example.com' },
      },
      database: mysqlDb('mysql80', true, 'wordpress_db', 'wp_user'),
      secrets: { wpAdminPassword: 'Adm1n-pass' },
    },
    phpmyadmin: { runtime: php('8.2'), database: mysqlDb('mariadb1011', true, null, 'phpmyadmin') },
    adonis: {
      runtime: node('20.x'),
      options: { site_type_version: 6 },
      database: pgDb('postgresql15', true, 'adonis_db', 'adonis_user'),
      port: 3001,
    },
    'nuxt-ssr': { runtime: node('20.x'), options: { site_type_version: 3 }, port: 3002 },
    'nuxt-static': { runtime: node('18.x'), options: { site_type_version: 2 } },
    'next-ssr': { runtime: node('22.x'), port: 3003 },
    'nodejs-ssr': { runtime: node('22.x'), port: 3004 },
    'nodejs-static': { runtime: node('22.x'), options: { artifactPath: 'build/out' } },
    strapi: {
      runtime: node('20.x'),
      options: { site_type_version: 5 },
      database: pgDb('postgresql13', true, 'strapi_db', 'strapi_user'),
      port: 3005,
    },
    directus: {
      runtime: node('22.x'),
      options: { site_type_version: 11, directusReleaseType: 'patch' },
      database: pgDb('postgresql15', true, 'directus_db', 'directus_user'),
      port: 3006,
    },
    'generic-port': { options: { port: 8090 }, port: 8090 },
    soketi: { runtime: node('18.x'), port: 6001 },
    'static-html': { options: { webDirectory: 'public_html' } },
  };
  return { ...base, ...byType[type], ...overrides };
}
