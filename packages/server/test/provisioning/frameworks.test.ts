import { describe, expect, it } from 'vitest';
import { recipeFor } from '../../src/provisioning/recipes/index.js';
import { installStrapi } from '../../src/provisioning/steps/frameworks/install-strapi.js';
import { makeContext, runSteps } from './support/context.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

const npmCalls = (server: FakeServer) => server.calls.filter((c) => c.argv[0] === 'npm');

describe('framework installs (npm with settings.npmRegistry)', () => {
  it('Directus: the major of site_type_version, patch updates with ~, bootstrapped against PostgreSQL', async () => {
    const server = new FakeServer();
    const site = siteOf('directus');
    await runSteps(makeContext(server.exec, site), recipeFor('directus').create(site));
    const install = npmCalls(server).find((c) => c.argv.includes('directus@11'));
    expect(install?.argv).toEqual([
      'npm',
      'install',
      '--save-prefix=~',
      'directus@11',
      '--no-audit',
      '--no-fund',
      '--registry=http://127.0.0.1:4873/',
    ]);
    expect(install?.options).toMatchObject({ asUser: 'alice', cwd: '/home/alice/directus.example.com/releases/directus' });
    const config = JSON.parse(server.fs.read('/home/alice/directus.example.com/releases/directus/directus.config.json') ?? '{}');
    expect(config).toMatchObject({
      DB_CLIENT: 'pg',
      DB_DATABASE: 'string:directus_db',
      DB_USER: 'string:directus_user',
      DB_PASSWORD: 'string:S3cret-pass',
      PORT: 3006,
      HOST: '127.0.0.1',
    });
    expect(server.fs.get('/home/alice/directus.example.com/releases/directus/directus.config.json')).toMatchObject({
      mode: '600',
      owner: 'alice',
    });
    expect(server.fs.get('/home/alice/directus.example.com/current')).toMatchObject({ target: 'releases/directus' });
    expect(server.fs.read('/home/alice/directus.example.com/ecosystem.config.cjs')).toContain(
      '"CONFIG_PATH": "/home/alice/directus.example.com/current/directus.config.json"',
    );
  });

  it('Directus minor release type uses ^, and without a database SQLite in shared/', async () => {
    const server = new FakeServer();
    const site = siteOf('directus', { options: { site_type_version: 10, directusReleaseType: 'minor' }, database: null });
    await runSteps(makeContext(server.exec, site), recipeFor('directus').create(site));
    expect(npmCalls(server).some((c) => c.argv.includes('--save-prefix=^') && c.argv.includes('directus@10'))).toBe(true);
    const config = JSON.parse(server.fs.read('/home/alice/directus.example.com/releases/directus/directus.config.json') ?? '{}');
    expect(config).toMatchObject({ DB_CLIENT: 'sqlite3', DB_FILENAME: '/home/alice/directus.example.com/shared/directus.db' });
  });

  it('Strapi: scaffolded without any password in argv, then pointed at PostgreSQL through .env', async () => {
    const server = new FakeServer();
    const site = siteOf('strapi');
    await runSteps(makeContext(server.exec, site), recipeFor('strapi').create(site));
    const scaffold = npmCalls(server).find((c) => c.argv[1] === 'exec');
    expect(scaffold?.argv.slice(0, 9)).toEqual([
      'npm',
      'exec',
      '--yes',
      '--no-audit',
      '--no-fund',
      '--registry=http://127.0.0.1:4873/',
      '--',
      'create-strapi-app@5.41.0',
      'strapi',
    ]);
    expect(server.calls.some((c) => c.argv.some((a) => a.includes('S3cret-pass')))).toBe(false);
    const env = server.fs.read('/home/alice/strapi.example.com/releases/strapi/.env');
    expect(env).toContain("DATABASE_CLIENT='postgres'");
    expect(env).toContain("DATABASE_PASSWORD='S3cret-pass'");
    expect(env).toContain('APP_KEYS=a,b');
    expect(server.fs.read('/home/alice/strapi.example.com/ecosystem.config.cjs')).toContain(
      '"script": "node_modules/@strapi/strapi/bin/strapi.js"',
    );
  });

  it('Strapi 3 is refused with the reason', async () => {
    const site = siteOf('strapi', { options: { site_type_version: 3 } });
    await expect(installStrapi(3).run(makeContext(new FakeServer().exec, site))).rejects.toThrow(
      /Strapi 3 reached its end of life/,
    );
  });

  it('Soketi: generated app credentials reach the PM2 environment, with SOKETI_PORT', async () => {
    const server = new FakeServer();
    const site = siteOf('soketi');
    await runSteps(makeContext(server.exec, site), recipeFor('soketi').create(site));
    const ecosystem = server.fs.read('/home/alice/soketi.example.com/ecosystem.config.cjs') ?? '';
    const credentials = JSON.parse(server.fs.read('/home/alice/soketi.example.com/releases/soketi/soketi.env.json') ?? '{}');
    expect(ecosystem).toContain(`"SOKETI_DEFAULT_APP_SECRET": "${credentials.SOKETI_DEFAULT_APP_SECRET}"`);
    expect(ecosystem).toContain('"SOKETI_PORT": "6001"');
    expect(credentials.SOKETI_DEFAULT_APP_SECRET).toMatch(/^[A-Za-z0-9]{48}$/);
  });

  it('refuses an npm registry that is not an http(s) URL', async () => {
    const server = new FakeServer();
    const site = siteOf('nodejs-ssr');
    const ctx = makeContext(server.exec, site, { settings: { npmRegistry: 'file:///etc' } });
    await expect(runSteps(ctx, recipeFor('nodejs-ssr').create(site))).rejects.toThrow(/must be an http\(s\) URL/);
  });
});
