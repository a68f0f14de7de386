import { BUILD_COMMAND_MAX_LENGTH, CREATE_SITE_BODIES } from '@siteplane/contract';
import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/domain/field-errors.js';
import { EMPTY_FACTS, type ServerFacts } from '../../src/domain/servers/facts.js';
import type { CreateSiteContext } from '../../src/domain/sites/create-site-context.js';
import { validateCreateSite } from '../../src/domain/sites/validate-create-site.js';

const SERVER = '11111111-1111-4111-8111-111111111111';
const USER = '22222222-2222-4222-8222-222222222222';
const DNS = '33333333-3333-4333-8333-333333333333';

function ctx(facts: Partial<ServerFacts> = {}, extra: Partial<CreateSiteContext> = {}): CreateSiteContext {
  return {
    server: { uuid: SERVER, facts: { ...EMPTY_FACTS, php: ['8.2'], ...facts } },
    serverUserExists: true,
    dnsProfile: { uuid: DNS, provider: 'cloudflare' },
    taken: { domains: new Set(), databases: new Set(), databaseUsers: new Set(), ports: new Set(), singletonTypes: new Set() },
    ...extra,
  };
}

const base = (type: string, options: Record<string, unknown> = {}, top: Record<string, unknown> = {}) => ({
  server: SERVER,
  serverUser: USER,
  type,
  domain: 'example.com',
  ssl: true,
  sslEmail: 'ops@example.com',
  sslProvider: 'letsencrypt',
  options,
  ...top,
});

function errorsOf(body: unknown, context = ctx()) {
  try {
    validateCreateSite(body, context);
  } catch (error) {
    if (error instanceof ValidationError) return error.errors.map((e) => `${e.field}:${e.code}`);
    throw error;
  }
  return [];
}

describe('spec §2.1 site type', () => {
  it('accepts canonical ids and display names case-insensitively; the plan carries the canonical id', () => {
    for (const [name, id] of [
      ['laravel', 'laravel'],
      ['Static HTML', 'static-html'],
      ['NODEJS SSR', 'nodejs-ssr'],
      ['phpMyAdmin', 'phpmyadmin'],
      ['Generic Port', 'generic-port'],
    ]) {
      const options = id === 'generic-port' ? { port: 8081 } : id === 'phpmyadmin' ? {} : {};
      expect(validateCreateSite(base(name as string, options), ctx()).type).toBe(id);
    }
  });
  it('rejects an unknown type and names the field', () => {
    expect(errorsOf(base('cobol'))).toEqual(['type:invalid_value']);
  });
  it('reports every violation at once', () => {
    expect(errorsOf({ type: 'laravel', options: 'x', extra: 1 })).toEqual(
      expect.arrayContaining([
        'server:required',
        'serverUser:required',
        'options:invalid_type',
        'extra:unknown_field',
        'domain:required',
        'ssl:required',
      ]),
    );
  });
  it('server and serverUser must exist (unknown or another tenant’s server reads as not found)', () => {
    expect(errorsOf(base('php'), { ...ctx(), server: null })).toEqual(['server:not_found']);
    expect(errorsOf(base('php'), { ...ctx(), serverUserExists: false })).toEqual(['serverUser:not_found']);
  });
  it('supportsLivewire is for laravel only', () => {
    expect(errorsOf(base('laravel', {}, { supportsLivewire: true }))).toEqual([]);
    expect(errorsOf(base('php', {}, { supportsLivewire: true }))).toEqual(['supportsLivewire:not_allowed_for_type']);
  });
});

describe('spec §4.1 rule 3 / §7: temporary domain', () => {
  it('freeDomain true needs none of domain, ssl, sslEmail, sslProvider, wildcard, dnsProfile; SSL is automatic', () => {
    const plan = validateCreateSite(
      { server: SERVER, serverUser: USER, type: 'static-html', freeDomain: true, options: {} },
      ctx(),
    );
    expect(plan.freeDomain).toBe(true);
    expect(plan.domain).toBeNull();
    expect(plan.ssl.enabled).toBe(true);
  });
  it('each removed field still present is a 422 naming it', () => {
    const body = {
      server: SERVER,
      serverUser: USER,
      type: 'static-html',
      freeDomain: true,
      domain: 'x.com',
      ssl: true,
      sslEmail: 'a@b.co',
      sslProvider: 'zerossl',
      wildcard: false,
      dnsProfile: { uuid: DNS, provider: 'cloudflare' },
      options: {},
    };
    expect(errorsOf(body).sort()).toEqual(
      ['domain', 'ssl', 'sslEmail', 'sslProvider', 'wildcard', 'dnsProfile']
        .map((f) => `${f}:not_allowed_with_free_domain`)
        .sort(),
    );
  });
});

describe('spec §2.1 custom domain and SSL', () => {
  it('normalises the domain and refuses bad host names and look-alikes', () => {
    expect(validateCreateSite(base('php', {}, { domain: 'WWW.Example.com.' }), ctx()).domain).toBe('www.example.com');
    for (const domain of [
      'exa mple.com',
      'example',
      '-a.com',
      'еxample.com',
      'a;rm -rf /.com',
      '$(id).com',
      `${'x'.repeat(64)}.com`,
    ]) {
      expect(errorsOf(base('php', {}, { domain }))).toEqual(['domain:invalid_format']);
    }
  });
  it('a domain already on the server is taken', () => {
    expect(errorsOf(base('php'), ctx({}, { taken: { ...ctx().taken, domains: new Set(['example.com']) } }))).toEqual([
      'domain:domain_taken',
    ]);
  });
  it('ssl true needs sslEmail and sslProvider letsencrypt|zerossl', () => {
    expect(errorsOf(base('php', {}, { sslEmail: undefined, sslProvider: undefined }))).toEqual([
      'sslProvider:required',
      'sslEmail:required',
    ]);
    expect(errorsOf(base('php', {}, { sslProvider: 'digicert' }))).toEqual(['sslProvider:invalid_value']);
    expect(errorsOf(base('php', {}, { sslEmail: 'nope' }))).toEqual(['sslEmail:invalid_format']);
  });
});

describe('spec §2.3 / §4.1 rule 4: wildcard', () => {
  const wild = (type: string, dnsProfile: unknown = { uuid: DNS, provider: 'cloudflare' }, more = {}) =>
    base(type, type === 'generic-port' ? { port: 9000 } : {}, { wildcard: true, dnsProfile, ...more });
  it('wildcard with a matching DNS profile, includeWwwSslCert adds www', () => {
    const plan = validateCreateSite(wild('laravel', undefined, { includeWwwSslCert: true }), ctx());
    expect(plan.ssl).toMatchObject({ wildcard: true, includeWww: true, dnsProfile: { uuid: DNS, provider: 'cloudflare' } });
  });
  it('needs dnsProfile; its provider must be one of four and match the stored profile', () => {
    expect(errorsOf(wild('php', undefined, { dnsProfile: undefined }))).toEqual(['dnsProfile:required']);
    expect(errorsOf(wild('php', { uuid: DNS, provider: 'godaddy' }))).toEqual(['dnsProfile.provider:invalid_value']);
    expect(errorsOf(wild('php', { uuid: DNS, provider: 'aws' }))).toEqual(['dnsProfile.provider:provider_mismatch']);
    expect(errorsOf(wild('php'), { ...ctx(), dnsProfile: null })).toEqual(['dnsProfile.uuid:not_found']);
  });
  it('is not available for phpMyAdmin or Soketi (spec §2.3, §8)', () => {
    expect(errorsOf(wild('phpmyadmin'))).toEqual(['wildcard:wildcard_not_allowed_for_type']);
    expect(errorsOf(wild('soketi'))).toEqual(['wildcard:wildcard_not_allowed_for_type']);
  });
  it('includeWwwSslCert without wildcard is refused', () => {
    expect(errorsOf(base('php', {}, { includeWwwSslCert: true }))).toEqual(['includeWwwSslCert:requires_wildcard']);
  });
});

describe('spec §4.1 rules 1 and 2: database setup', () => {
  it('rule 1: skipping the database means none of its fields are sent', () => {
    expect(validateCreateSite(base('laravel'), ctx()).database).toBeNull();
    expect(errorsOf(base('laravel', { database: 'app', preferredDbServer: 'mysql80' }))).toEqual([
      'options.database:not_allowed_without_database',
      'options.preferredDbServer:not_allowed_without_database',
    ]);
    expect(errorsOf(base('strapi', { shouldCreateDatabaseAndUser: false, databaseUser: 'u' }))).toEqual([
      'options.databaseUser:not_allowed_without_database',
    ]);
  });
  it('rule 2: WordPress always creates a database', () => {
    const plan = validateCreateSite(base('wordpress', { performInstallSetup: false }), ctx());
    expect(plan.database).toMatchObject({ createDatabase: true, engine: 'mysql80', installEngine: true });
    expect(errorsOf(base('wordpress', { performInstallSetup: false, shouldCreateDatabaseAndUser: false }))).toEqual([
      'options.shouldCreateDatabaseAndUser:must_equal',
    ]);
  });
  it('rule 2: phpMyAdmin creates the user phpmyadmin and never a database', () => {
    const plan = validateCreateSite(base('phpmyadmin'), ctx());
    expect(plan.database).toMatchObject({ createDatabase: false, user: 'phpmyadmin', name: null });
    expect(errorsOf(base('phpmyadmin', { database: 'pma' }))).toEqual(['options.database:not_allowed']);
    expect(errorsOf(base('phpmyadmin', { databaseUser: 'admin' }))).toEqual(['options.databaseUser:must_equal']);
  });
  it('§2.2/§8: database names are letters, digits, _ and $; names and users unique on the server', () => {
    expect(
      validateCreateSite(base('php', { shouldCreateDatabaseAndUser: true, database: 'shop$1_db' }), ctx()).database?.name,
    ).toBe('shop$1_db');
    expect(errorsOf(base('php', { shouldCreateDatabaseAndUser: true, database: 'shop-db' }))).toEqual([
      'options.database:invalid_format',
    ]);
    expect(errorsOf(base('php', { shouldCreateDatabaseAndUser: true, database: "x';DROP" }))).toEqual([
      'options.database:invalid_format',
    ]);
    const taken = { ...ctx().taken, databases: new Set(['shop']), databaseUsers: new Set(['shopper']) };
    expect(
      errorsOf(base('php', { shouldCreateDatabaseAndUser: true, database: 'shop', databaseUser: 'shopper' }), ctx({}, { taken })),
    ).toEqual(['options.database:database_taken', 'options.databaseUser:database_user_taken']);
  });
  it('§2.2: on PostgreSQL the user must not start with pg_', () => {
    expect(errorsOf(base('strapi', { shouldCreateDatabaseAndUser: true, databaseUser: 'pg_admin' }))).toEqual([
      'options.databaseUser:reserved_prefix',
    ]);
    expect(errorsOf(base('php', { shouldCreateDatabaseAndUser: true, databaseUser: 'pg_admin' }))).toEqual([]);
  });
  it('useCachingSha2Password is a MySQL option', () => {
    expect(errorsOf(base('directus', { shouldCreateDatabaseAndUser: true, useCachingSha2Password: true }))).toEqual([
      'options.useCachingSha2Password:not_applicable',
    ]);
  });
  it('types without a database refuse database fields', () => {
    expect(errorsOf(base('nuxt-ssr', { database: 'x' }))).toEqual(['options.database:not_allowed_for_type']);
  });
});

describe('spec §4.1 rule 5 / §2.4: database engine', () => {
  const db = (type: string, options: Record<string, unknown> = {}) =>
    base(type, { shouldCreateDatabaseAndUser: true, ...options });
  it('defaults: MySQL family installs mysql80, PostgreSQL family installs postgresql13', () => {
    expect(validateCreateSite(db('laravel'), ctx()).database).toMatchObject({ engine: 'mysql80', installEngine: true });
    expect(validateCreateSite(db('adonis'), ctx()).database).toMatchObject({ engine: 'postgresql13', installEngine: true });
  });
  it('an installed family is reused', () => {
    expect(validateCreateSite(db('laravel'), ctx({ mysql: 'mariadb1011' })).database).toMatchObject({
      engine: 'mariadb1011',
      installEngine: false,
    });
    expect(validateCreateSite(db('strapi'), ctx({ postgresql: 'postgresql15' })).database).toMatchObject({
      engine: 'postgresql15',
      installEngine: false,
    });
  });
  it('a wanted version is installed when the family is absent', () => {
    expect(validateCreateSite(db('php', { preferredDbServer: 'mariadb106' }), ctx()).database).toMatchObject({
      engine: 'mariadb106',
      installEngine: true,
    });
  });
  it('a different version of an installed family is a 422', () => {
    expect(errorsOf(db('php', { preferredDbServer: 'mysql57' }), ctx({ mysql: 'mariadb1011' }))).toEqual([
      'options.preferredDbServer:db_server_version_conflict',
    ]);
    expect(errorsOf(db('directus', { preferredDbServer: 'postgresql17' }), ctx({ postgresql: 'postgresql15' }))).toEqual([
      'options.preferredDbServer:db_server_version_conflict',
    ]);
  });
  it('families coexist; WordPress and phpMyAdmin are MySQL/MariaDB only', () => {
    expect(
      validateCreateSite(db('laravel', { preferredDbServer: 'postgresql15' }), ctx({ mysql: 'mysql80' })).database?.engine,
    ).toBe('postgresql15');
    expect(errorsOf(base('wordpress', { performInstallSetup: false, preferredDbServer: 'postgresql15' }))).toEqual([
      'options.preferredDbServer:db_family_not_supported',
    ]);
    expect(errorsOf(base('phpmyadmin', { preferredDbServer: 'postgresql15' }))).toEqual([
      'options.preferredDbServer:db_family_not_supported',
    ]);
    expect(errorsOf(db('strapi', { preferredDbServer: 'mysql80' }))).toEqual([
      'options.preferredDbServer:db_family_not_supported',
    ]);
  });
  it('unknown engines are refused', () => {
    expect(errorsOf(db('php', { preferredDbServer: 'oracle19' }))).toEqual(['options.preferredDbServer:invalid_value']);
  });
});

describe('spec §2.2: PHP and Node versions', () => {
  it('phpVersion from the allowed list; installed when missing, others left alone', () => {
    expect(validateCreateSite(base('php', { phpVersion: '8.4' }), ctx()).runtime.php).toEqual({ version: '8.4', install: true });
    expect(validateCreateSite(base('php'), ctx({ php: ['7.4', '8.2'] })).runtime.php).toEqual({ version: '8.2', install: false });
    expect(errorsOf(base('php', { phpVersion: '5.6' }))).toEqual(['options.phpVersion:invalid_value']);
  });
  it('a server without PHP gets its distribution’s own PHP when none is asked for (no third-party repository)', () => {
    const bare = (os: string | null) => ctx({ php: [], os });
    expect(validateCreateSite(base('laravel'), bare('debian 12')).runtime.php).toEqual({ version: '8.2', install: true });
    expect(validateCreateSite(base('php'), bare('debian 13')).runtime.php).toEqual({ version: '8.4', install: true });
    expect(validateCreateSite(base('php'), bare(null)).runtime.php).toEqual({ version: '8.3', install: true });
  });
  it('PHP_SOURCE=distribution: a version the distribution does not ship is refused on options.phpVersion', () => {
    const only = (facts: Partial<ServerFacts>) => ctx({ os: 'debian 12', ...facts }, { phpSource: 'distribution' });
    expect(errorsOf(base('php', { phpVersion: '8.3' }), only({ php: [] }))).toEqual([
      'options.phpVersion:php_version_unavailable',
    ]);
    expect(validateCreateSite(base('php', { phpVersion: '8.2' }), only({ php: [] })).runtime.php).toEqual({
      version: '8.2',
      install: true,
    });
    // Already on the server (however it came there): reused, nothing to install.
    expect(validateCreateSite(base('php', { phpVersion: '8.3' }), only({ php: ['8.3'] })).runtime.php).toEqual({
      version: '8.3',
      install: false,
    });
    // The default source adds Sury for it.
    expect(errorsOf(base('php', { phpVersion: '8.3' }), ctx({ php: [], os: 'debian 12' }))).toEqual([]);
  });
  it('Node: reused when installed (nodejsVersion ignored), installed when absent', () => {
    expect(
      validateCreateSite(base('nuxt-ssr', { nodejsVersion: '18.x', site_type_version: 3 }), ctx({ node: 'v20.11.1' })).runtime
        .node,
    ).toEqual({
      version: '20.x',
      action: 'reuse',
    });
    expect(validateCreateSite(base('next-ssr', { nodejsVersion: '18.x' }), ctx()).runtime.node).toEqual({
      version: '18.x',
      action: 'install',
    });
    expect(errorsOf(base('next-ssr', { nodejsVersion: '19.x' }))).toEqual(['options.nodejsVersion:invalid_value']);
  });
  it('§2.5: Adonis 6 needs Node 20+, 7 needs 24+; an older installed Node is upgraded', () => {
    expect(errorsOf(base('adonis', { site_type_version: 6, nodejsVersion: '18.x' }))).toEqual([
      'options.nodejsVersion:node_too_old',
    ]);
    expect(errorsOf(base('adonis', { site_type_version: 7, nodejsVersion: '22.x' }))).toEqual([
      'options.nodejsVersion:node_too_old',
    ]);
    expect(validateCreateSite(base('adonis', { site_type_version: 7 }), ctx({ node: 'v20.1.0' })).runtime.node).toEqual({
      version: '24.x',
      action: 'upgrade',
    });
    expect(validateCreateSite(base('adonis', { site_type_version: 5 }), ctx({ node: 'v16.0.0' })).runtime.node).toEqual({
      version: '16.x',
      action: 'reuse',
    });
  });
});

describe('spec §2.5: type-specific options', () => {
  it('site_type_version per type, from options or top level; both and different is a 422', () => {
    expect(validateCreateSite(base('nuxt-static', { site_type_version: 3 }), ctx()).options.site_type_version).toBe(3);
    expect(validateCreateSite(base('strapi', {}, { site_type_version: 4 }), ctx()).options.site_type_version).toBe(4);
    expect(errorsOf(base('directus', { site_type_version: 9 }))).toEqual(['options.site_type_version:invalid_value']);
    expect(errorsOf(base('adonis', { site_type_version: 6 }, { site_type_version: 5 }))).toEqual([
      'site_type_version:conflicting_values',
    ]);
    expect(errorsOf(base('php', { site_type_version: 1 }))).toEqual(['options.site_type_version:not_allowed_for_type']);
  });
  it('Directus release type patch or minor', () => {
    expect(validateCreateSite(base('directus', { directusReleaseType: 'patch' }), ctx()).options.directusReleaseType).toBe(
      'patch',
    );
    expect(errorsOf(base('directus', { directusReleaseType: 'major' }))).toEqual(['options.directusReleaseType:invalid_value']);
  });
  it('Generic Port requires a free port', () => {
    expect(errorsOf(base('generic-port'))).toEqual(['options.port:required']);
    expect(errorsOf(base('generic-port', { port: 80 }))).toEqual(['options.port:out_of_range']);
    expect(
      errorsOf(base('generic-port', { port: 9000 }), ctx({}, { taken: { ...ctx().taken, ports: new Set([9000]) } })),
    ).toEqual(['options.port:port_taken']);
  });
  it('NodeJS Static requires artifactPath; NodeJS SSR may set it; paths are relative without ..', () => {
    expect(errorsOf(base('nodejs-static'))).toEqual(['options.artifactPath:required']);
    expect(validateCreateSite(base('nodejs-ssr', { artifactPath: 'dist/' }), ctx()).options.artifactPath).toBe('dist');
    expect(errorsOf(base('nodejs-static', { artifactPath: '/etc' }))).toEqual(['options.artifactPath:invalid_format']);
    expect(errorsOf(base('nodejs-static', { artifactPath: '../../etc' }))).toEqual(['options.artifactPath:invalid_format']);
  });
  it('Static HTML webDirectory: empty is the root, no leading /', () => {
    expect(validateCreateSite(base('static-html', { webDirectory: '' }), ctx()).options.webDirectory).toBe('');
    expect(errorsOf(base('static-html', { webDirectory: '/public' }))).toEqual(['options.webDirectory:invalid_format']);
  });
  it('WordPress: performInstallSetup false removes wpAdminSetup; otherwise wpAdminSetup is required and its password kept secret', () => {
    expect(errorsOf(base('wordpress', { performInstallSetup: false, wpAdminSetup: {} }))).toEqual([
      'options.wpAdminSetup:not_allowed',
    ]);
    expect(errorsOf(base('wordpress'))).toEqual(['options.wpAdminSetup:required']);
    const plan = validateCreateSite(
      base('wordpress', {
        wpAdminSetup: { title: 'Blog', adminUser: 'admin', adminPassword: 'correct horse', adminEmail: 'a@b.co' },
      }),
      ctx(),
    );
    expect(plan.options.wpAdminSetup).toEqual({ title: 'Blog', adminUser: 'admin', adminEmail: 'a@b.co' });
    expect(plan.secrets.wpAdminPassword).toBe('correct horse');
  });
  it('options that do not apply to the type are refused, unknown ones too', () => {
    expect(errorsOf(base('static-html', { phpVersion: '8.2', frobnicate: 1 }))).toEqual([
      'options.phpVersion:not_allowed_for_type',
      'options.frobnicate:unknown_field',
    ]);
  });
  it('buildCommand is at most 2000 characters: the limit of the contract’s create schema, enforced from it', () => {
    expect(errorsOf(base('nuxt-ssr', { buildCommand: 'x'.repeat(BUILD_COMMAND_MAX_LENGTH) }))).toEqual([]);
    expect(errorsOf(base('nuxt-ssr', { buildCommand: 'x'.repeat(BUILD_COMMAND_MAX_LENGTH + 1) }))).toEqual([
      'options.buildCommand:too_long',
    ]);
  });
  it('the create schema of each type is checked: a limit it states alone is enforced', () => {
    const strict = {
      ...(CREATE_SITE_BODIES['nuxt-ssr'].properties.options as unknown as { properties: Record<string, unknown> }).properties,
    };
    expect(strict.buildCommand).toMatchObject({ maxLength: BUILD_COMMAND_MAX_LENGTH });
    // A display name is checked against its type's schema too.
    expect(errorsOf({ ...base('nuxt-ssr', { buildCommand: 'y'.repeat(2001) }), type: 'Nuxt SSR' })).toEqual([
      'options.buildCommand:too_long',
    ]);
  });
  it('buildCommand is one line', () => {
    expect(errorsOf(base('nuxt-ssr', { buildCommand: 'npm ci\nrm -rf /' }))).toEqual(['options.buildCommand:invalid_characters']);
  });
});

describe('spec §8: one per server', () => {
  it('phpMyAdmin and Soketi once per server', () => {
    const taken = { ...ctx().taken, singletonTypes: new Set(['phpmyadmin', 'soketi'] as const) };
    expect(errorsOf(base('phpmyadmin'), ctx({}, { taken }))).toEqual(['type:one_per_server']);
    expect(errorsOf(base('soketi'), ctx({}, { taken }))).toEqual(['type:one_per_server']);
  });
});
