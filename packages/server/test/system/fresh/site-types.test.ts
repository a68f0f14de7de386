import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConfigMachine, checkEveryRenderedConfig } from '../../provisioning/support/real-config-checks.js';
import {
  mysqlDatabaseExists,
  mysqlDrop,
  mysqlLogin,
  mysqlUserHosts,
  pgDatabaseExists,
  pgDatabaseOwner,
  pgDrop,
  pgLogin,
  pgRole,
  pgVerifierMatches,
} from '../sites/support/databases.js';
import { Harness, type JsonBody, removeSystemUser, runId } from '../sites/support/harness.js';
import {
  curlSite,
  curlUntil,
  freePort,
  type HttpAnswer,
  mustRun,
  pathKind,
  phpMyAdminLogin,
  pm2List,
  pm2ProcessesOf,
  run,
  server,
} from '../sites/support/host.js';
import { hostPhp, requireTestHost } from '../support/test-host.js';
import { expectSoketiOutcome, SOKETI_OPTIONS } from './soketi.js';

/**
 * Issue 9 items 1-2: every site type on a pristine Debian host (scripts/test-env/test-host.sh: a
 * debootstrap minbase with sshd and nothing else, root's umask 027), from the first site on. The
 * host is registered and verified over the API; a first wave (one site per family) installs what
 * the bare host lacks — package lists, nginx, PHP, MariaDB, PostgreSQL, Node, PM2 — and a second
 * wave of the other types reuses it. Each site is checked from the outside (nginx answers with what
 * its type serves, databases and logins, PM2), then deleted with and without deleteDatabase and
 * the server checked clean. Per-type seconds go to .test-output/fresh-host-<os>.json. Strapi and
 * Directus, the two heaviest installs, are created (and checked the same way) on a pristine host of
 * their own by deploy-real-cms.test.ts, which then deploys projects onto them: one install of each
 * per run instead of two.
 */
const id = runId();
const user = `spf${id}`;
const domain = (type: string) => `${type}-${id}.siteplane.test`;
const PHP = hostPhp(requireTestHost());
const PHP_POOL = `/etc/php/${PHP}/fpm/pool.d/${user}.conf`;
const PHP_SOCKET = `/run/php/php${PHP}-fpm-${user}.sock`;
const INSTALL_TIMEOUT_MS = 20 * 60_000;

interface Made {
  type: string;
  domain: string;
  site: JsonBody;
  password?: string;
  postedAt: number;
  seconds?: number;
  outcome?: string;
}

const FIRST_WAVE: [string, Record<string, unknown>][] = [
  ['static-html', {}],
  [
    'php',
    { shouldCreateDatabaseAndUser: true, database: `php_${id}`, databaseUser: `php_${id}`, databasePassword: 'php-Secret-123' },
  ],
  ['nodejs-ssr', {}],
  [
    'adonis',
    {
      site_type_version: 6,
      shouldCreateDatabaseAndUser: true,
      database: `adonis_${id}`,
      databaseUser: `adonis_${id}`,
      databasePassword: 'adonis-Secret-012',
    },
  ],
];

describe('every site type on a pristine Debian host, from the first site on (issue 9; spec §2.5, §4.1)', () => {
  let h: Harness;
  let upstreamPid: string | null = null;
  let upstreamPort = 0;
  const made = new Map<string, Made>();

  beforeAll(async () => {
    h = await Harness.start({ username: user, env: { WORKER_CONCURRENCY: '16' } });
  });

  afterAll(async () => {
    // setsid made the upstream its own process group: end the group, node and runuser alike.
    if (upstreamPid) await run('kill', ['--', `-${upstreamPid}`]);
    await h?.stop();
    const php = made.get('php')?.site.database;
    if (php) await mysqlDrop(php.name, php.user).catch(() => undefined);
    const adonis = made.get('adonis')?.site.database;
    if (adonis) await pgDrop(adonis.name, adonis.user).catch(() => undefined);
    await removeSystemUser(user, id);
    const host = server();
    mkdirSync('.test-output', { recursive: true });
    writeFileSync(
      `.test-output/fresh-host-${host.os}.json`,
      `${JSON.stringify(
        [...made.values()].map((m) => ({ type: m.type, outcome: m.outcome, seconds: m.seconds })),
        null,
        2,
      )}\n`,
    );
  });

  it('registers the bare host over SSH: verified, and nothing a site needs is installed', async () => {
    const verified = await h.registerServer();
    expect(verified.status).toBe('verified');
    expect(verified.facts).toMatchObject({ php: [], node: null, mysql: null, postgresql: null, nginx: null, pm2: null });
    expect(verified.facts.os).toMatch(/^debian 1[23]$/);
  });

  it(
    'first wave on the bare host: one site per family installs what it needs',
    async () => {
      await createAll(FIRST_WAVE);
      await settle(FIRST_WAVE.map(([type]) => type));
      // What the steps recorded as they installed it…
      const stored = (await h.api('GET', `/api/v1/servers/${h.server}`)).body.facts;
      expect(stored.php).toContain(PHP);
      expect(stored.node).toMatch(/^22\./);
      expect(stored.mysql).toMatch(/^mariadb/);
      expect(stored.postgresql).toMatch(/^postgresql/);
      // …is what detection (POST /verify, as before every job) finds on the host, nginx and PM2 too.
      const verified = await h.api('POST', `/api/v1/servers/${h.server}/verify`);
      expect(verified.status).toBe(200);
      expect(verified.body.facts).toMatchObject({
        php: stored.php,
        node: stored.node,
        mysql: stored.mysql,
        postgresql: stored.postgresql,
        nginx: expect.stringMatching(/^\d+\.\d+/),
        pm2: expect.stringMatching(/^\d+\.\d+/),
      });
      // The package lists were fetched once, by the first site that needed them.
      const logs = await allLogs(FIRST_WAVE.map(([type]) => type));
      expect(logs.filter((line) => line === 'refreshed the package lists').length).toBeGreaterThanOrEqual(1);
    },
    INSTALL_TIMEOUT_MS + 60_000,
  );

  it(
    'second wave: the other nine types reuse what the first installed',
    async () => {
      upstreamPort = await freePort();
      const second: [string, Record<string, unknown>][] = [
        ['laravel', { shouldCreateDatabaseAndUser: true }],
        [
          'wordpress',
          {
            database: `wp_${id}`,
            databaseUser: `wp_${id}`,
            databasePassword: 'wp-Secret-456',
            wpAdminSetup: { title: `Blog ${id}`, adminUser: 'admin', adminPassword: 'wp-Admin-789', adminEmail: 'a@example.com' },
          },
        ],
        ['phpmyadmin', {}],
        ['nuxt-ssr', { site_type_version: 3 }],
        ['nuxt-static', { site_type_version: 3 }],
        ['next-ssr', {}],
        ['nodejs-static', { artifactPath: 'dist' }],
        ['generic-port', { port: upstreamPort }],
        ['soketi', SOKETI_OPTIONS],
      ];
      await createAll(second);
      await settle(
        second.map(([type]) => type).filter((type) => type !== 'soketi'),
        ['soketi'],
      );
      // Nothing of the server-wide software was installed a second time, and the package lists
      // were not fetched again — except by apt.ts's recovery, when an install found that the
      // mirror had moved on since the first wave (a 404 for a version the lists still name).
      const logs = await allLogs(second.map(([type]) => type));
      const again = logs.filter(
        (line, i) =>
          (line === 'refreshed the package lists' &&
            !logs[i - 1]?.endsWith('failed as on outdated package lists; refreshing them and trying once more')) ||
          /^installed (nginx|mariadb-server|postgresql)/.test(line),
      );
      // The lines go into the message: a CI log keeps only a failure's first line.
      expect(again, JSON.stringify(logs.filter((line) => /package lists|^installed /.test(line)))).toEqual([]);
      expect(logs.some((line) => /Node\.js .* is installed; reusing it/.test(line))).toBe(true);
      await expectSoketiOutcome(h, made.get('soketi')!.site);
      made.get('soketi')!.outcome = (await h.api('GET', `/api/v1/sites/${made.get('soketi')!.site.uuid}`)).body.status;
    },
    INSTALL_TIMEOUT_MS + 60_000,
  );

  it('serves each type through nginx: static roots, PHP through the user’s pool, Node processes, the port', async () => {
    // Generic Port: the owner's own process on the site's port; the test plays it (Node is there now).
    upstreamPid = await startUpstream(upstreamPort);
    const ready = (type: string) => (a: { body: string }) => a.body.includes(`${domain(type)} is ready`);
    for (const type of made.keys()) {
      if (type === 'soketi' && made.get(type)!.outcome !== 'installed') continue;
      await curlUntil(
        domain(type),
        '/',
        (a) => a.status !== 0 && a.status !== 502 && !a.body.includes('Welcome to nginx'),
        30_000,
      );
    }
    for (const type of ['static-html', 'nuxt-static', 'nodejs-static', 'nodejs-ssr', 'nuxt-ssr', 'next-ssr', 'adonis']) {
      const answer = await curlSite(domain(type));
      expect(ready(type)(answer), await whoAnswered(type, answer)).toBe(true);
    }
    for (const [type, web] of [
      ['php', ''],
      ['laravel', '/public'],
    ] as const) {
      const root = `/home/${user}/${domain(type)}/current${web}`;
      expect((await curlSite(domain(type))).body).toContain(`${domain(type)} is ready`);
      await mustRun('runuser', ['-u', user, '--', 'dd', `of=${root}/whoami.php`, 'status=none'], {
        input: '<?php echo json_encode(["php" => PHP_VERSION, "user" => posix_getpwuid(posix_geteuid())["name"]]);',
      });
      const answer = await curlSite(domain(type), '/whoami.php');
      expect(answer.status, answer.body).toBe(200);
      expect(JSON.parse(answer.body)).toEqual({ php: expect.stringMatching(new RegExp(`^${PHP.replace('.', '\\.')}\\.`)), user });
    }
    const wp = await curlSite(domain('wordpress'));
    expect(wp.status).toBe(200);
    expect(wp.body).toContain(`Blog ${id}`);
    const pma = await curlSite(domain('phpmyadmin'));
    expect(pma.status).toBe(200);
    expect(pma.body).toContain('name="pma_username"');
    const generic = await curlUntil(domain('generic-port'), '/hello', (a) => a.status === 200, 10_000);
    expect(generic.body).toBe(`generic upstream saw host=${domain('generic-port')} path=/hello`);

    const pm2 = await pm2List(user);
    for (const type of ['nodejs-ssr', 'nuxt-ssr', 'next-ssr', 'adonis']) {
      expect(pm2.get(domain(type)), type).toBe('online');
    }
    expect(pathKind(PHP_POOL)).toBe('file');
  }, 180_000);

  it('renders files the real nginx, php-fpm and php accept, on the host Siteplane provisioned', async () => {
    // real-config.test.ts's checks (every type's vhost with hostile names, a pool, hostile
    // passwords in PHP configs): this machine has no nginx or PHP, this host has them now.
    const host = server();
    const onHost: ConfigMachine = {
      workDir() {
        const there = `/root/siteplane-config-${id}-${randomUUID()}`;
        const here = join(host.root, there);
        mkdirSync(here, { mode: 0o700 });
        return { there, here };
      },
      run: (command, args, input) => run(command, args, { input: input ?? '' }),
    };
    await checkEveryRenderedConfig(onHost, PHP);
  }, 120_000);

  it('created each database and user, and each user logs in with its password', async () => {
    for (const type of ['php', 'laravel', 'wordpress']) {
      const m = made.get(type)!;
      const db = m.site.database as { name: string; user: string; engine: string };
      expect(db.engine, `${type}: ${JSON.stringify(m.site.database)}`).toMatch(/^mariadb/);
      expect(await mysqlDatabaseExists(db.name)).toBe(true);
      expect(await mysqlUserHosts(db.user)).toEqual(['127.0.0.1', 'localhost']);
      const login = await mysqlLogin(db.user, m.password!);
      // Over TCP to 127.0.0.1: MariaDB names the client localhost when it resolves names (Debian's default).
      expect(login?.currentUser).toMatch(new RegExp(`^${db.user}@(127\\.0\\.0\\.1|localhost)$`));
      expect(login?.databases.filter((d) => d !== 'information_schema')).toEqual([db.name]);
      expect(await mysqlLogin(db.user, `${m.password}x`)).toBeNull();
    }
    const pma = made.get('phpmyadmin')!;
    expect(pma.site.database).toMatchObject({ name: null, user: 'phpmyadmin' });
    const pmaDomain = domain('phpmyadmin');
    expect(await phpMyAdminLogin(pmaDomain, 'phpmyadmin', pma.password!)).toContain('phpMyAdmin');
    expect(await phpMyAdminLogin(pmaDomain, 'phpmyadmin', `${pma.password}x`)).not.toContain('/ localhost');

    for (const type of ['adonis']) {
      const m = made.get(type)!;
      const db = m.site.database as { name: string; user: string; engine: string };
      expect(db.engine, `${type}: ${JSON.stringify(m.site.database)}`).toMatch(/^postgresql/);
      expect(await pgDatabaseOwner(db.name)).toBe(db.user);
      const role = await pgRole(db.user);
      expect(role?.canLogin).toBe(true);
      expect(pgVerifierMatches(role!.secret, m.password!, db.user)).toBe(true);
      expect(await pgLogin(db.user, m.password!, db.name)).toBe(db.user);
    }
  });

  it('deletes sites without deleteDatabase: files, vhost and process go, database and login stay', async () => {
    for (const type of ['php', 'adonis', 'static-html', 'nodejs-ssr', 'nuxt-ssr', 'next-ssr', 'nodejs-static']) {
      const m = made.get(type)!;
      const del = await h.deleteSite(m.site.uuid, type === 'php' ? false : undefined);
      await h.waitGone(m.site, del.operation.uuid, 120_000);
      await expectSiteGone(m);
    }
    expect(pathKind(PHP_POOL)).toBe('file');
    const php = made.get('php')!;
    expect(await mysqlDatabaseExists(php.site.database.name)).toBe(true);
    expect((await mysqlLogin(php.site.database.user, php.password!))?.databases).toContain(php.site.database.name);
    const adonis = made.get('adonis')!;
    expect(await pgDatabaseExists(adonis.site.database.name)).toBe(true);
  }, 300_000);

  it('deletes the rest with deleteDatabase: databases and users dropped, pool and PM2 daemon gone', async () => {
    const rest = ['laravel', 'wordpress', 'phpmyadmin', 'nuxt-static', 'generic-port', 'soketi'];
    for (const type of rest) {
      const m = made.get(type)!;
      const del = await h.deleteSite(m.site.uuid, true);
      await h.waitGone(m.site, del.operation.uuid, 120_000);
      await expectSiteGone(m);
      const db = m.site.database;
      if (db?.name && db.engine.startsWith('postgresql')) expect(await pgDatabaseExists(db.name)).toBe(false);
      if (db?.user && db.engine.startsWith('postgresql')) expect(await pgRole(db.user)).toBeNull();
      if (db?.name && !db.engine.startsWith('postgresql')) expect(await mysqlDatabaseExists(db.name)).toBe(false);
      if (db?.user && !db.engine.startsWith('postgresql')) expect(await mysqlUserHosts(db.user)).toEqual([]);
    }
    expect(pathKind(PHP_POOL)).toBeNull();
    expect(pathKind(PHP_SOCKET)).toBeNull();
    expect(await pm2ProcessesOf(user)).toEqual([]);
    expect(pathKind(`/home/${user}/.pm2/pm2.pid`)).toBeNull();
    // Nothing of this run's sites is left in nginx's configuration.
    const leftovers = await run('sh', [
      '-c',
      'ls /etc/nginx/sites-enabled /etc/nginx/sites-available | grep -F -- "$1" || true',
      'sh',
      id,
    ]);
    expect(leftovers.stdout.trim()).toBe('');
  }, 600_000);

  async function createAll(list: [string, Record<string, unknown>][]): Promise<void> {
    for (const [type, options] of list) {
      const postedAt = Date.now();
      const site = await h.createSite(type, domain(type), options);
      expect(site.status).toBe('pending');
      const password = (options.databasePassword as string | undefined) ?? site.generated_database_password;
      made.set(type, { type, domain: domain(type), site, password, postedAt });
    }
  }

  /** Waits for every listed type to be installed (and the others merely to finish), noting seconds. */
  async function settle(mustInstall: string[], mayFail: string[] = []): Promise<void> {
    const outcomes = await Promise.allSettled(
      [...mustInstall, ...mayFail].map(async (type) => {
        const m = made.get(type)!;
        const done = mayFail.includes(type)
          ? await h.waitFor(m.site.uuid, ['installed', 'failed'], INSTALL_TIMEOUT_MS, 250)
          : await h.waitInstalled(m.site, INSTALL_TIMEOUT_MS);
        m.seconds = Math.round((Date.now() - m.postedAt) / 100) / 10;
        m.outcome = done.status;
      }),
    );
    expect(outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []))).toEqual([]);
  }

  async function allLogs(types: string[]): Promise<string[]> {
    const lines: string[] = [];
    for (const type of types) lines.push(...(await h.operation(made.get(type)!.site.operation.uuid)).logs.map((l) => l.line));
    return lines;
  }

  /**
   * One line on an unexpected answer, for the failure's message: the answer, and whether nginx has
   * the site's vhost and PM2 its process (nginx's default server answers for a domain it lacks).
   */
  async function whoAnswered(type: string, answer: HttpAnswer): Promise<string> {
    const body = answer.body.replace(/\s+/g, ' ').slice(0, 160);
    const vhost = pathKind(`/etc/nginx/sites-enabled/${domain(type)}.conf`) ?? 'none';
    const pm2 = (await pm2List(user)).get(domain(type)) ?? 'none';
    return `${type} answered ${answer.status} ${JSON.stringify(body)}; enabled vhost: ${vhost}; PM2: ${pm2}`;
  }

  async function startUpstream(port: number): Promise<string> {
    const script = `require('http').createServer((q, s) => { s.writeHead(200, {'content-type': 'text/plain'}); s.end('generic upstream saw host=' + q.headers.host + ' path=' + q.url); }).listen(${port}, '127.0.0.1')`;
    const started = await mustRun('sh', [
      '-c',
      'setsid "$@" </dev/null >/dev/null 2>&1 & echo $!',
      'sh',
      'runuser',
      '-u',
      user,
      '--',
      'node',
      '-e',
      script,
    ]);
    return started.stdout.trim();
  }

  async function expectSiteGone(m: Made): Promise<void> {
    const root = `/home/${user}/${m.domain}`;
    expect(pathKind(root), root).toBeNull();
    expect(pathKind(`/etc/nginx/sites-available/${m.domain}.conf`)).toBeNull();
    expect(pathKind(`/etc/nginx/sites-enabled/${m.domain}.conf`)).toBeNull();
    expect(pathKind(`/var/log/nginx/${m.domain}.access.log`)).toBeNull();
    expect(pathKind(`/var/lib/siteplane/acme/${m.domain}`)).toBeNull();
    expect((await pm2List(user)).has(m.domain)).toBe(false);
    expect((await curlSite(m.domain)).body).not.toContain(`${m.domain} is ready`);
    expect((await h.api('GET', `/api/v1/sites/${m.site.uuid}`)).status).toBe(404);
  }
});
