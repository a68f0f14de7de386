import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/app/config.js';
import { seedServer, startTestService, TEST_DB, type TestService } from '../support/test-service.js';

describe('configuration: DB_ENGINE_SOURCE, WORDPRESS_SOURCE, PHPMYADMIN_SOURCE', () => {
  it('defaults to the vendors (spec §4.1 rule 5) and the upstream archives', () => {
    const config = loadConfig({});
    expect(config.databaseEngineSource).toBe('vendor');
    expect(config.wordpressSource).toMatch(/^https:\/\/wordpress\.org\//);
  });
  it('accepts distribution and debian', () => {
    const config = loadConfig({ DB_ENGINE_SOURCE: 'distribution', WORDPRESS_SOURCE: 'debian', PHPMYADMIN_SOURCE: 'debian' });
    expect(config).toMatchObject({ databaseEngineSource: 'distribution', wordpressSource: 'debian', phpmyadminSource: 'debian' });
  });
  it('lists every bad value at start', () => {
    try {
      loadConfig({ DB_ENGINE_SOURCE: 'apt', WORDPRESS_SOURCE: 'ftp://x/wp.tgz', PHPMYADMIN_SOURCE: 'relative/dir' });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      const problems = (error as ConfigError).problems.join('\n');
      expect(problems).toMatch(/DB_ENGINE_SOURCE must be one of vendor, distribution/);
      expect(problems).toMatch(/WORDPRESS_SOURCE must be "debian"/);
      expect(problems).toMatch(/PHPMYADMIN_SOURCE must be "debian"/);
    }
  });
});

describe(`POST /api/v1/sites with DB_ENGINE_SOURCE=distribution on ${TEST_DB} (spec §4.1 rule 5, §2.4)`, () => {
  let s: TestService;
  const auth = () => ({ authorization: `Bearer ${s.token}` });
  const create = (ids: { server: string; serverUser: string }, domain: string, options: Record<string, unknown>) =>
    s.app.inject({
      method: 'POST',
      url: '/api/v1/sites',
      headers: auth(),
      payload: { ...ids, type: 'laravel', domain, ssl: false, options: { shouldCreateDatabaseAndUser: true, ...options } },
    });

  beforeAll(async () => {
    s = await startTestService({ env: { DB_ENGINE_SOURCE: 'distribution' } });
  });
  afterAll(async () => s?.stop());

  it('plans and records Debian 12’s MariaDB when no engine is installed and none is asked for', async () => {
    const ids = await seedServer(s, { os: 'debian 12' });
    const res = await create(ids, 'a.example.com', {});
    expect(res.statusCode).toBe(202);
    expect(res.json().database).toMatchObject({ engine: 'mariadb1011' });
    const server = await s.app.inject({ method: 'GET', url: `/api/v1/servers/${ids.server}`, headers: auth() });
    expect(server.json().facts.mysql).toBe('mariadb1011');
  });

  it('refuses a version only a vendor repository has: 422 naming options.preferredDbServer and why', async () => {
    const ids = await seedServer(s, { os: 'debian 12' });
    const res = await create(ids, 'b.example.com', { preferredDbServer: 'mysql80' });
    expect(res.statusCode).toBe(422);
    expect(res.json().errors).toEqual([
      { field: 'options.preferredDbServer', code: 'db_engine_unavailable', message: expect.stringContaining('repo.mysql.com') },
    ]);
  });

  it('describes and reuses Debian 13’s MariaDB 11.8 (a name outside §2.4); another version is a 422', async () => {
    const ids = await seedServer(s, { os: 'debian 13', mysql: 'mariadb118' });
    const reuse = await create(ids, 'c.example.com', {});
    expect(reuse.statusCode).toBe(202);
    expect(reuse.json().database).toMatchObject({ engine: 'mariadb118' });
    const other = await create(ids, 'd.example.com', { preferredDbServer: 'mariadb1011' });
    expect(other.statusCode).toBe(422);
    expect(other.json().errors[0]).toMatchObject({ field: 'options.preferredDbServer', code: 'db_server_version_conflict' });
  });
});
