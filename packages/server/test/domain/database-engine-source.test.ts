import { describe, expect, it } from 'vitest';
import { ValidationError } from '../../src/domain/field-errors.js';
import { EMPTY_FACTS, type ServerFacts } from '../../src/domain/servers/facts.js';
import type { CreateSiteContext } from '../../src/domain/sites/create-site-context.js';
import { validateCreateSite } from '../../src/domain/sites/validate-create-site.js';
import { engineOffer } from '../../src/provisioning/steps/database/engine-offer.js';

const SERVER = '11111111-1111-4111-8111-111111111111';
const USER = '22222222-2222-4222-8222-222222222222';

function ctx(source: 'vendor' | 'distribution', facts: Partial<ServerFacts>): CreateSiteContext {
  return {
    server: { uuid: SERVER, facts: { ...EMPTY_FACTS, php: ['8.2'], ...facts } },
    serverUserExists: true,
    engines: engineOffer(source),
    taken: { domains: new Set(), databases: new Set(), databaseUsers: new Set(), ports: new Set(), singletonTypes: new Set() },
  };
}

const site = (type: string, options: Record<string, unknown> = {}) => ({
  server: SERVER,
  serverUser: USER,
  type,
  domain: 'example.com',
  ssl: false,
  options: type === 'wordpress' ? { performInstallSetup: false, ...options } : { shouldCreateDatabaseAndUser: true, ...options },
});

function errorsOf(body: unknown, context: CreateSiteContext) {
  try {
    validateCreateSite(body, context);
  } catch (error) {
    if (error instanceof ValidationError) return error.errors.map((e) => ({ field: e.field, code: e.code, message: e.message }));
    throw error;
  }
  return [];
}

const debian12 = { os: 'debian 12' };
const debian13 = { os: 'debian 13' };

describe('DB_ENGINE_SOURCE=vendor: spec §4.1 rule 5 as written', () => {
  it('installs mysql80 and postgresql13 when the family is missing (§4.1 rule 5)', () => {
    expect(validateCreateSite(site('laravel'), ctx('vendor', debian12)).database).toMatchObject({
      engine: 'mysql80',
      installEngine: true,
    });
    expect(validateCreateSite(site('strapi'), ctx('vendor', debian12)).database?.engine).toBe('postgresql13');
  });
  it('accepts every §2.4 value for a missing family (§2.4)', () => {
    expect(validateCreateSite(site('php', { preferredDbServer: 'mysql80' }), ctx('vendor', debian12)).database?.engine).toBe(
      'mysql80',
    );
  });
});

describe('DB_ENGINE_SOURCE=distribution: the engine the server’s distribution ships', () => {
  it.each([
    ['laravel', debian12, 'mariadb1011'],
    ['php', debian12, 'mariadb1011'],
    ['wordpress', debian12, 'mariadb1011'],
    ['phpmyadmin', debian12, 'mariadb1011'],
    ['adonis', debian12, 'postgresql15'],
    ['strapi', debian12, 'postgresql15'],
    ['directus', debian12, 'postgresql15'],
    ['laravel', debian13, 'mariadb118'],
    ['strapi', debian13, 'postgresql17'],
    ['wordpress', { os: 'Debian 12' }, 'mariadb1011'],
  ])('%s on %j without preferredDbServer installs %s (§4.1 rule 5, §2.5 families)', (type, facts, engine) => {
    const options = type === 'adonis' ? { site_type_version: 5 } : type === 'strapi' ? { site_type_version: 5 } : {};
    const body = type === 'directus' ? site(type, { site_type_version: 11, directusReleaseType: 'patch' }) : site(type, options);
    expect(validateCreateSite(body, ctx('distribution', facts)).database).toMatchObject({ engine, installEngine: true });
  });

  it('accepts a preferredDbServer the distribution ships (§2.4)', () => {
    const plan = validateCreateSite(site('laravel', { preferredDbServer: 'mariadb1011' }), ctx('distribution', debian12));
    expect(plan.database).toMatchObject({ engine: 'mariadb1011', installEngine: true });
    const pg = validateCreateSite(
      site('strapi', { preferredDbServer: 'postgresql17', site_type_version: 5 }),
      ctx('distribution', debian13),
    );
    expect(pg.database?.engine).toBe('postgresql17');
  });

  it.each([
    ['mysql80', 'repo.mysql.com'],
    ['mariadb106', 'dlm.mariadb.com'],
    ['mysql57', 'no other package source'],
  ])('refuses %s on Debian 12 with a 422 naming options.preferredDbServer and why (%s)', (engine, why) => {
    const errors = errorsOf(site('laravel', { preferredDbServer: engine }), ctx('distribution', debian12));
    expect(errors).toEqual([
      { field: 'options.preferredDbServer', code: 'db_engine_unavailable', message: expect.stringContaining(why) },
    ]);
    expect(errors[0]?.message).toContain('mariadb1011');
  });

  it('refuses a PostgreSQL version only PGDG publishes (postgresql13 on Debian 12)', () => {
    const errors = errorsOf(
      site('directus', { preferredDbServer: 'postgresql13', site_type_version: 11, directusReleaseType: 'patch' }),
      ctx('distribution', debian12),
    );
    expect(errors).toEqual([
      {
        field: 'options.preferredDbServer',
        code: 'db_engine_unavailable',
        message: expect.stringContaining('apt.postgresql.org'),
      },
    ]);
  });

  it('refuses when the server’s OS is unknown or not a distribution it knows, naming the server', () => {
    expect(errorsOf(site('laravel'), ctx('distribution', { os: null })).map((e) => `${e.field}:${e.code}`)).toEqual([
      'server:db_engine_unavailable',
    ]);
    const [ubuntu] = errorsOf(site('laravel'), ctx('distribution', { os: 'ubuntu 24.04' }));
    expect(ubuntu).toMatchObject({ field: 'server', code: 'db_engine_unavailable' });
    expect(ubuntu?.message).toContain('reused');
  });
});

describe('installed engines outside §2.4 (Debian 13’s MariaDB 11.8): rule 5 and reuse', () => {
  for (const source of ['vendor', 'distribution'] as const) {
    it(`${source}: reuses mariadb118 when preferredDbServer is omitted (§4.1 rule 5)`, () => {
      expect(validateCreateSite(site('wordpress'), ctx(source, { ...debian13, mysql: 'mariadb118' })).database).toMatchObject({
        engine: 'mariadb118',
        installEngine: false,
      });
    });
    it(`${source}: a different version of the installed family is a 422 (§4.1 rule 5, §7)`, () => {
      expect(
        errorsOf(site('wordpress', { preferredDbServer: 'mariadb1011' }), ctx(source, { ...debian13, mysql: 'mariadb118' })),
      ).toEqual([
        {
          field: 'options.preferredDbServer',
          code: 'db_server_version_conflict',
          message: expect.stringContaining('mariadb118'),
        },
      ]);
    });
  }
  it('an installed vendor engine is reused under distribution too: only installs are limited', () => {
    expect(
      validateCreateSite(
        site('laravel', { preferredDbServer: 'mysql80' }),
        ctx('distribution', { ...debian12, mysql: 'mysql80' }),
      ).database,
    ).toMatchObject({
      engine: 'mysql80',
      installEngine: false,
    });
  });
});
