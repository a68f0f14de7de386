import { describe, expect, it } from 'vitest';
import type { ProvisionedSite } from '../../src/provisioning/step.js';
import { ensureDatabaseEngine } from '../../src/provisioning/steps/database/ensure-database-engine.js';
import { ensureNode } from '../../src/provisioning/steps/ensure-node.js';
import { ensurePhp } from '../../src/provisioning/steps/ensure-php.js';
import { ensurePm2 } from '../../src/provisioning/steps/ensure-pm2.js';
import { makeContext, sharedServerLock } from './support/context.js';
import { preinstall } from './support/fake-packages.js';
import { FakeServer } from './support/fake-server.js';
import { siteOf } from './support/sites.js';

const commands = (server: FakeServer) => server.calls.map((c) => c.argv.join(' '));

describe('ensure PHP (spec §2.2: installed if missing, other versions left alone)', () => {
  it('installs 8.2 from Debian without adding a repository', async () => {
    const server = new FakeServer();
    const ctx = makeContext(server.exec, siteOf('php'));
    await ensurePhp('8.2').run(ctx);
    expect(commands(server).some((c) => c.includes('sury'))).toBe(false);
    expect(ctx.facts.php).toEqual(['8.2']);
  });

  it('adds packages.sury.org for versions Debian does not have, then installs', async () => {
    const server = new FakeServer();
    preinstall(server, ['php8.2-fpm']);
    const ctx = makeContext(server.exec, siteOf('php'), {
      facts: { os: 'debian 12', php: ['8.2'], node: null, mysql: null, postgresql: null },
    });
    await ensurePhp('7.4').run(ctx);
    expect(server.fs.read('/etc/apt/sources.list.d/sury-php.list')).toBe(
      'deb [signed-by=/etc/apt/keyrings/sury-php.gpg] https://packages.sury.org/php/ bookworm main\n',
    );
    expect(server.apt.installed.has('php7.4-fpm')).toBe(true);
    expect(server.apt.installed.has('php8.2-fpm')).toBe(true);
    expect(ctx.facts.php).toEqual(['7.4', '8.2']);
  });

  it('completes a partial install (an extension missing) without touching the rest', async () => {
    const server = new FakeServer();
    preinstall(server, [
      'php8.2-fpm',
      'php8.2-cli',
      'php8.2-mysql',
      'php8.2-pgsql',
      'php8.2-mbstring',
      'php8.2-xml',
      'php8.2-curl',
    ]);
    await ensurePhp('8.2').run(makeContext(server.exec, siteOf('php')));
    expect(commands(server).filter((c) => c.startsWith('apt-get install'))).toEqual([
      'apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 -o Dpkg::Options::=--force-confold php8.2-zip',
    ]);
  });

  it('says why it cannot add Sury on a system that is not Debian', async () => {
    const server = new FakeServer();
    server.fs.write('/etc/os-release', 'ID=ubuntu\nVERSION_CODENAME=noble\n');
    await expect(ensurePhp('8.4').run(makeContext(server.exec, siteOf('php')))).rejects.toThrow(
      /Sury PHP repository on Debian only/,
    );
  });
});

describe('ensure Node.js (one version per server)', () => {
  const site = (
    version: string,
    action: 'install' | 'reuse' | 'upgrade',
    type: ProvisionedSite['type'] = 'nodejs-ssr',
    options = {},
  ) => siteOf(type, { runtime: { node: { version, action } }, options });

  it('reuses an installed Node whatever nodejsVersion says', async () => {
    const server = new FakeServer();
    server.nodeVersion = '20.11.1';
    server.programs.add('node');
    const ctx = makeContext(server.exec, site('22.x', 'reuse'));
    await ensureNode().run(ctx);
    expect(commands(server)).toEqual(['env node --version']);
    expect(ctx.logs).toEqual(['Node.js 20.11.1 is installed; reusing it']);
  });

  it("installs Debian's nodejs and npm when the major matches", async () => {
    const server = new FakeServer();
    const ctx = makeContext(server.exec, site('18.x', 'install'));
    await ensureNode().run(ctx);
    expect(server.apt.installed.has('npm')).toBe(true);
    expect(server.fs.get('/etc/apt/sources.list.d/nodesource.list')).toBeUndefined();
    expect(ctx.facts.node).toBe('18.19.0');
  });

  it('installs other majors from NodeSource', async () => {
    const server = new FakeServer();
    const ctx = makeContext(server.exec, site('24.x', 'install'));
    await ensureNode().run(ctx);
    expect(server.fs.read('/etc/apt/sources.list.d/nodesource.list')).toContain(
      'https://deb.nodesource.com/node_24.x nodistro main',
    );
    expect(ctx.facts.node).toBe('24.11.0');
  });

  it('upgrades a Node too old for Adonis 7', async () => {
    const server = new FakeServer();
    server.nodeVersion = '20.11.1';
    const ctx = makeContext(server.exec, site('24.x', 'upgrade', 'adonis', { site_type_version: 7 }));
    await ensureNode().run(ctx);
    expect(server.nodeVersion).toBe('24.11.0');
    expect(ctx.logs[0]).toBe('Node.js 20.11.1 is older than 24.x that this site needs; upgrading');
  });
});

describe('ensure PM2', () => {
  it("installs Debian's npm first when a reused Node came without it, then PM2 from the configured registry", async () => {
    const server = new FakeServer();
    preinstall(server, ['nodejs']);
    await ensurePm2().run(makeContext(server.exec, siteOf('nodejs-ssr')));
    expect(commands(server).filter((c) => c.startsWith('apt-get') || c.startsWith('npm'))).toEqual([
      'apt-get install -y -q --no-install-recommends -o DPkg::Lock::Timeout=600 -o Dpkg::Options::=--force-confold npm',
      'npm install --global --no-audit --no-fund --registry=http://127.0.0.1:4873/ pm2@latest',
    ]);
    expect(server.programs.has('pm2')).toBe(true);
  });

  it('two sites at once on a new server: one install, the other finds it (both under one hold of the lock)', async () => {
    const server = new FakeServer();
    preinstall(server, ['nodejs', 'npm']);
    const lock = sharedServerLock();
    const a = makeContext(server.exec, siteOf('nodejs-ssr'));
    const b = makeContext(server.exec, siteOf('nodejs-ssr'));
    a.withServerLock = lock;
    b.withServerLock = lock;
    await Promise.all([ensurePm2().run(a), ensurePm2().run(b)]);
    expect(commands(server).filter((c) => c.startsWith('npm install'))).toHaveLength(1);
    expect([...a.logs, ...b.logs].filter((l) => l.startsWith('PM2 is installed'))).toHaveLength(1);
  });
});

describe('ensure database engine (spec §4.1 rule 5)', () => {
  const withDb = (engine: NonNullable<ProvisionedSite['database']>['engine'], installEngine: boolean) =>
    siteOf('laravel', {
      database: {
        createDatabase: true,
        name: 'db',
        user: 'u',
        password: 'p4ssword',
        engine,
        installEngine,
        useCachingSha2Password: false,
      },
    });

  it('reuses a running engine without installing anything', async () => {
    const server = new FakeServer();
    preinstall(server, ['mariadb-server']);
    const ctx = makeContext(server.exec, withDb('mariadb1011', false));
    await ensureDatabaseEngine().run(ctx);
    expect(commands(server).some((c) => c.startsWith('apt-get'))).toBe(false);
    expect(ctx.logs).toEqual(['mariadb1011 is installed']);
  });

  it('starts an installed engine that is not running (no systemd: its init script)', async () => {
    const server = new FakeServer();
    preinstall(server, ['postgresql-15']);
    server.postgres.running = false;
    await ensureDatabaseEngine().run(makeContext(server.exec, withDb('postgresql15', false)));
    expect(commands(server)).toContain('/etc/init.d/postgresql start');
    expect(server.postgres.running).toBe(true);
  });

  it('two creates at once find the installed engine stopped: it is started once, and both reuse it', async () => {
    const server = new FakeServer();
    preinstall(server, ['postgresql-15']);
    server.postgres.running = false;
    const lock = sharedServerLock();
    const a = makeContext(server.exec, withDb('postgresql15', false));
    const b = makeContext(server.exec, withDb('postgresql15', false));
    a.withServerLock = lock;
    b.withServerLock = lock;
    await Promise.all([ensureDatabaseEngine().run(a), ensureDatabaseEngine().run(b)]);
    expect(commands(server).filter((c) => c === '/etc/init.d/postgresql start')).toHaveLength(1);
    expect(server.postgres.running).toBe(true);
  });

  it('uses systemctl where systemd runs', async () => {
    const server = new FakeServer();
    server.systemd = true;
    server.fs.mkdirp('/run/systemd/system');
    await ensureDatabaseEngine().run(makeContext(server.exec, withDb('mariadb1011', true)));
    expect(commands(server)).toContain('systemctl start mariadb');
  });

  it('adds the MySQL repository for mysql80 and records the engine in the facts', async () => {
    const server = new FakeServer();
    const ctx = makeContext(server.exec, withDb('mysql80', true));
    await ensureDatabaseEngine().run(ctx);
    expect(server.fs.read('/etc/apt/sources.list.d/mysql.list')).toBe(
      'deb [signed-by=/etc/apt/keyrings/mysql.asc] https://repo.mysql.com/apt/debian/ bookworm mysql-8.0\n',
    );
    expect(ctx.facts.mysql).toBe('mysql80');
  });

  it.each([
    ['mysql57', /not published for current Debian/],
    ['mariadb104', /end of life/],
  ] as const)('explains why %s cannot be installed', async (engine, message) => {
    await expect(ensureDatabaseEngine().run(makeContext(new FakeServer().exec, withDb(engine, true)))).rejects.toThrow(message);
  });
});
