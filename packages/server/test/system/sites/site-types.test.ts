import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
} from './support/databases.js';
import { Harness, type JsonBody, removeSystemUser, runId } from './support/harness.js';
import { curlSite, curlUntil, freePort, mustRun, pathKind, phpMyAdminLogin, pm2List, pm2ProcessesOf } from './support/host.js';

/**
 * Issue 3 item 9 on a real server: 127.0.0.1 over SSH (the test sshd), registered and verified
 * through the API; one site of each of nine types created through POST /api/v1/sites, checked from
 * the outside (nginx answers, PHP runs as the site user, databases and logins, PM2), then deleted
 * with and without deleteDatabase and the server checked clean.
 */
const id = runId();
const user = `spt${id}`;
const domain = (type: string) => `${type}-${id}.siteplane.test`;
const PHP_POOL = `/etc/php/8.2/fpm/pool.d/${user}.conf`;
const PHP_SOCKET = `/run/php/php8.2-fpm-${user}.sock`;

interface Made {
  type: string;
  domain: string;
  site: JsonBody;
  /** The database password as sent (or generated and returned once in the 202 body). */
  password?: string;
}

describe('sites of nine types on a real server over SSH (issue 3 item 9; spec §2.5, §4.1)', () => {
  let h: Harness;
  let upstream: Server;
  let upstreamPort = 0;
  const made = new Map<string, Made>();

  beforeAll(async () => {
    h = await Harness.start({ username: user });
    upstreamPort = await freePort();
    // Generic Port: the owner's own process on the site's port; the test plays it.
    upstream = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.end(`generic upstream saw host=${req.headers.host} path=${req.url}`);
    });
    await new Promise<void>((resolve) => upstream.listen(upstreamPort, '127.0.0.1', resolve));
  });

  afterAll(async () => {
    await new Promise((resolve) => upstream?.close(resolve));
    await h?.stop();
    // What the deletions without deleteDatabase kept on purpose.
    const php = made.get('php')?.site.database;
    if (php) await mysqlDrop(php.name, php.user);
    const adonis = made.get('adonis')?.site.database;
    if (adonis) await pgDrop(adonis.name, adonis.user);
    await removeSystemUser(user, id);
  });

  it('registers 127.0.0.1 as an ssh server, authorises its key and verifies it (facts detected)', async () => {
    const server = await h.registerServer();
    expect(server.status).toBe('verified');
    expect(server.host_key_sha256).toMatch(/^SHA256:/);
    expect(server.facts).toMatchObject({
      os: 'debian 12',
      php: ['8.2'],
      mysql: 'mariadb1011',
      postgresql: 'postgresql15',
      nginx: expect.stringMatching(/^1\.22\./),
      node: expect.stringMatching(/^\d+\.\d+\.\d+$/),
    });
  });

  it('creates nine types over the API and each reaches installed', async () => {
    const requests: [string, Record<string, unknown>][] = [
      ['static-html', {}],
      [
        'php',
        {
          shouldCreateDatabaseAndUser: true,
          database: `php_${id}`,
          databaseUser: `php_${id}`,
          databasePassword: 'php-Secret-123',
        },
      ],
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
      ['nodejs-ssr', {}],
      ['nuxt-static', { site_type_version: 3 }],
      ['generic-port', { port: upstreamPort }],
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
    for (const [type, options] of requests) {
      const site = await h.createSite(type, domain(type), options);
      expect(site.status).toBe('pending');
      const password = (options.databasePassword as string | undefined) ?? site.generated_database_password;
      made.set(type, { type, domain: domain(type), site, password });
    }
    // The worker runs up to four jobs at once: the sites are provisioned side by side.
    const outcomes = await Promise.allSettled([...made.values()].map((m) => h.waitInstalled(m.site, 120_000)));
    const failures = outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []));
    expect(failures).toEqual([]);
    for (const m of made.values()) {
      const op = await h.operation(m.site.operation.uuid);
      expect(op.status).toBe('succeeded');
      expect(op.steps.every((s) => s.status === 'succeeded')).toBe(true);
    }
  }, 180_000);

  it('serves each site through nginx (curl --resolve), PHP through the user’s pool', async () => {
    const ready = (type: string) => (a: { body: string }) => a.body.includes(`${domain(type)} is ready`);
    // Every site became installed only after its nginx reload: the last one may still be settling.
    for (const type of made.keys())
      await curlUntil(domain(type), '/', (a) => a.status !== 0 && !a.body.includes('Welcome to nginx'));
    expect(ready('static-html')(await curlSite(domain('static-html')))).toBe(true);
    expect(ready('nuxt-static')(await curlSite(domain('nuxt-static')))).toBe(true);

    // PHP and Laravel: the placeholder page, and a PHP file run by the user's FPM pool.
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
      expect(JSON.parse(answer.body)).toEqual({ php: expect.stringMatching(/^8\.2\./), user });
    }

    const wp = await curlSite(domain('wordpress'));
    expect(wp.status).toBe(200);
    expect(wp.body).toContain(`Blog ${id}`);
    const pma = await curlSite(domain('phpmyadmin'));
    expect(pma.status).toBe(200);
    expect(pma.body).toContain('phpMyAdmin');
    expect(pma.body).toContain('name="pma_username"');

    const node = await curlSite(domain('nodejs-ssr'));
    expect(node.status).toBe(200);
    expect(node.body).toContain(`${domain('nodejs-ssr')} is ready`);
    const adonis = await curlSite(domain('adonis'));
    expect(adonis.body).toContain(`${domain('adonis')} is ready`);

    const generic = await curlSite(domain('generic-port'), '/hello');
    expect(generic.body).toBe(`generic upstream saw host=${domain('generic-port')} path=/hello`);

    // Two Node processes of this user under PM2, online, named after their domains.
    const pm2 = await pm2List(user);
    expect(pm2.get(domain('nodejs-ssr'))).toBe('online');
    expect(pm2.get(domain('adonis'))).toBe('online');
    // One shared FPM pool for the user's PHP sites.
    expect(pathKind(PHP_POOL)).toBe('file');
  });

  it('created each database and user, and the user logs in with its password', async () => {
    for (const type of ['php', 'laravel', 'wordpress']) {
      const m = made.get(type)!;
      const db = m.site.database as { name: string; user: string; engine: string };
      expect(db.engine).toBe('mariadb1011');
      expect(await mysqlDatabaseExists(db.name)).toBe(true);
      expect(await mysqlUserHosts(db.user)).toEqual(['127.0.0.1', 'localhost']);
      const login = await mysqlLogin(db.user, m.password!);
      expect(login?.currentUser).toBe(`${db.user}@127.0.0.1`);
      expect(login?.databases).toContain(db.name);
      // Rights on its own database only.
      expect(login?.databases.filter((d) => d !== 'information_schema')).toEqual([db.name]);
      expect((await mysqlLogin(db.user, m.password!, 'socket'))?.currentUser).toBe(`${db.user}@localhost`);
      expect(await mysqlLogin(db.user, `${m.password}x`)).toBeNull();
    }
    // phpMyAdmin: a `phpmyadmin` user, no database of its own; its web login works with that user.
    const pma = made.get('phpmyadmin')!;
    expect(pma.site.database).toMatchObject({ name: null, user: 'phpmyadmin' });
    expect(await mysqlLogin('phpmyadmin', pma.password!)).not.toBeNull();
    const pmaDomain = domain('phpmyadmin');
    expect(await phpMyAdminLogin(pmaDomain, 'phpmyadmin', pma.password!)).toContain(`${pmaDomain} / localhost | phpMyAdmin`);
    expect(await phpMyAdminLogin(pmaDomain, 'phpmyadmin', `${pma.password}x`)).not.toContain('/ localhost');

    // Adonis: PostgreSQL role owning its database; the stored verifier is the password's.
    const adonis = made.get('adonis')!;
    const db = adonis.site.database as { name: string; user: string; engine: string };
    expect(db.engine).toBe('postgresql15');
    expect(await pgDatabaseOwner(db.name)).toBe(db.user);
    const role = await pgRole(db.user);
    expect(role?.canLogin).toBe(true);
    expect(pgVerifierMatches(role!.secret, adonis.password!, db.user)).toBe(true);
    expect(pgVerifierMatches(role!.secret, `${adonis.password}x`, db.user)).toBe(false);
    expect(await pgLogin(db.user, adonis.password!, db.name)).toBe(db.user);
  });

  it('deletes sites without deleteDatabase: files, vhost and process go, database and login stay', async () => {
    for (const type of ['php', 'adonis', 'static-html', 'nodejs-ssr']) {
      const m = made.get(type)!;
      const del = await h.deleteSite(m.site.uuid, type === 'php' ? false : undefined);
      await h.waitGone(m.site, del.operation.uuid);
      await expectSiteGone(m);
      // Adonis was not the user's last Node site: their PM2 daemon goes on running nodejs-ssr.
      if (type === 'adonis') expect((await pm2List(user)).get(domain('nodejs-ssr'))).toBe('online');
    }
    // nodejs-ssr was the last: the user's PM2 daemon was stopped with it.
    expect(await pm2ProcessesOf(user)).toEqual([]);
    expect(pathKind(`/home/${user}/.pm2/pm2.pid`)).toBeNull();
    // The pool stays: laravel, wordpress and phpmyadmin of the same user still use it.
    expect(pathKind(PHP_POOL)).toBe('file');
    const php = made.get('php')!;
    expect(await mysqlDatabaseExists(php.site.database.name)).toBe(true);
    expect((await mysqlLogin(php.site.database.user, php.password!))?.databases).toContain(php.site.database.name);
    const adonis = made.get('adonis')!;
    expect(await pgDatabaseExists(adonis.site.database.name)).toBe(true);
    expect(
      pgVerifierMatches((await pgRole(adonis.site.database.user))!.secret, adonis.password!, adonis.site.database.user),
    ).toBe(true);
  }, 120_000);

  it('deletes the rest with deleteDatabase: databases and users dropped, the unshared pool removed', async () => {
    for (const type of ['laravel', 'wordpress', 'phpmyadmin', 'nuxt-static', 'generic-port']) {
      const m = made.get(type)!;
      const del = await h.deleteSite(m.site.uuid, true);
      await h.waitGone(m.site, del.operation.uuid);
      await expectSiteGone(m);
      if (m.site.database?.name) expect(await mysqlDatabaseExists(m.site.database.name)).toBe(false);
      if (m.site.database?.user) expect(await mysqlUserHosts(m.site.database.user)).toEqual([]);
    }
    // No PHP site of the user is left: its pool is gone, and php-fpm no longer serves its socket.
    expect(pathKind(PHP_POOL)).toBeNull();
    expect(pathKind(PHP_SOCKET)).toBeNull();
    expect((await pm2List(user)).size).toBe(0);
  }, 120_000);

  it('a kept database is released: deleting nothing else leaves it, and it is still taken on the server', async () => {
    const php = made.get('php')!;
    const again = await h.postSite('php', `again-${domain('php')}`, {
      shouldCreateDatabaseAndUser: true,
      database: php.site.database.name,
    });
    expect(again.status).toBe(422);
    expect(again.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ field: 'options.database' })]));
  });

  async function expectSiteGone(m: Made): Promise<void> {
    const root = `/home/${user}/${m.domain}`;
    expect(pathKind(root), root).toBeNull();
    expect(pathKind(`/etc/nginx/sites-available/${m.domain}.conf`)).toBeNull();
    expect(pathKind(`/etc/nginx/sites-enabled/${m.domain}.conf`)).toBeNull();
    expect(pathKind(`/var/log/nginx/${m.domain}.access.log`)).toBeNull();
    expect(pathKind(`/var/lib/siteplane/acme/${m.domain}`)).toBeNull();
    expect((await pm2List(user)).has(m.domain)).toBe(false);
    const answer = await curlSite(m.domain);
    expect(answer.body).not.toContain(`${m.domain} is ready`);
    expect((await h.api('GET', `/api/v1/sites/${m.site.uuid}`)).status).toBe(404);
  }
});
