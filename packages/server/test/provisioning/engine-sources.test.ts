import { DB_SERVERS, type DbEngine } from '@siteplane/contract';
import { describe, expect, it } from 'vitest';
import type { ProvisionedSite } from '../../src/provisioning/step.js';
import { engineOffer } from '../../src/provisioning/steps/database/engine-offer.js';
import { distributionEngine, ENGINE_SOURCES, engineSource } from '../../src/provisioning/steps/database/engines.js';
import { ensureDatabaseEngine } from '../../src/provisioning/steps/database/ensure-database-engine.js';
import { makeContext } from './support/context.js';
import { preinstall } from './support/fake-packages.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

const withEngine = (engine: DbEngine, installEngine: boolean): ProvisionedSite => ({
  ...siteOf('laravel'),
  // A plan may name an engine outside §2.4 (reused or a distribution's default); the stored record is a string.
  database: {
    ...siteOf('laravel').database!,
    engine: engine as NonNullable<ProvisionedSite['database']>['engine'],
    installEngine,
  },
});

describe('the engine table (steps/database/engines.ts) and DB_ENGINE_SOURCE', () => {
  it('lists every §2.4 value (spec §2.4)', () => {
    expect(Object.keys(ENGINE_SOURCES).sort()).toEqual([...DB_SERVERS].sort());
  });

  it.each([
    ['debian 12', 'mariadb1011', 'postgresql15'],
    ['debian 13', 'mariadb118', 'postgresql17'],
  ])('%s ships %s and %s', (os, mysql, postgresql) => {
    expect(distributionEngine('mysql', os)?.engine).toBe(mysql);
    expect(distributionEngine('postgresql', os)?.engine).toBe(postgresql);
    expect(engineOffer('distribution').defaultEngine('mysql', os)).toEqual({ engine: mysql });
  });

  it('vendor keeps the spec’s rule 5 defaults (spec §4.1 rule 5)', () => {
    expect(engineOffer('vendor').defaultEngine('mysql', 'debian 12')).toEqual({ engine: 'mysql80' });
    expect(engineOffer('vendor').defaultEngine('postgresql', 'debian 12')).toEqual({ engine: 'postgresql13' });
    expect(engineOffer('vendor').refusal('mysql80', 'debian 12')).toBeNull();
  });

  it('distribution refuses, on Debian 12, every §2.4 value but the two Debian ships', () => {
    const allowed = DB_SERVERS.filter((engine) => engineOffer('distribution').refusal(engine, 'debian 12') === null);
    expect(allowed).toEqual(['mariadb1011', 'postgresql15']);
  });

  it('an engine found on a server but not in the table is reused, never installed', () => {
    expect(engineSource('mariadb114')).toMatchObject({ family: 'mysql', packages: ['mariadb-server'] });
    expect(engineSource('postgresql16')).toMatchObject({ family: 'postgresql', packages: ['postgresql-16'] });
    expect(engineSource('mariadb114').unavailable).toMatch(/never installed/);
  });
});

describe('ensure database engine with distribution engines (fake Debian 12)', () => {
  it('installs mariadb1011 from Debian without adding any repository, and records it', async () => {
    const server = new FakeServer();
    const ctx = makeContext(server.exec, withEngine('mariadb1011', true));
    await ensureDatabaseEngine().run(ctx);
    expect(server.apt.installed.has('mariadb-server')).toBe(true);
    expect(server.fs.subtree('/etc/apt/sources.list.d').filter((p) => p.endsWith('.list'))).toEqual([]);
    expect(ctx.facts.mysql).toBe('mariadb1011');
  });

  it('installs postgresql15 from Debian without PGDG', async () => {
    const server = new FakeServer();
    const ctx = makeContext(server.exec, withEngine('postgresql15', true));
    await ensureDatabaseEngine().run(ctx);
    expect(server.apt.installed.has('postgresql-15')).toBe(true);
    expect(server.fs.get('/etc/apt/sources.list.d/pgdg.list')).toBeUndefined();
    expect(ctx.facts.postgresql).toBe('postgresql15');
  });

  it('reuses an installed engine outside the table (mariadb114) and fails clearly when it is gone', async () => {
    const server = new FakeServer();
    preinstall(server, ['mariadb-server']);
    const ctx = makeContext(server.exec, withEngine('mariadb114', false));
    await ensureDatabaseEngine().run(ctx);
    expect(ctx.logs).toEqual(['mariadb114 is installed']);
    const bare = new FakeServer();
    await expect(ensureDatabaseEngine().run(makeContext(bare.exec, withEngine('mariadb114', false)))).rejects.toThrow(
      /not in Siteplane's engine table/,
    );
  });
});
