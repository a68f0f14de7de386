import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlLogin, mysqlUserHosts, pgDatabaseExists, pgLogin, pgRole, pgVerifierMatches } from './support/databases.js';
import { Harness, type JsonBody, removeSystemUser, runId } from './support/harness.js';
import { curlSite, curlUntil, pathKind, run } from './support/host.js';

/**
 * Issue 3 item 8 on the real server: hostile passwords sent through the API are either refused
 * with 422 or stored and used literally — the database accepts exactly them, WordPress logs in
 * with exactly its admin password — and nothing in them is ever executed (canary files).
 */
const id = runId();
const user = `spx${id}`;
const canary = (n: number) => `/tmp/siteplane-pwned-${id}-${n}`;
const sub = (n: number) => `$(touch ${canary(n)})`;
const tick = (n: number) => `\`touch ${canary(n)}\``;

// Quotes, command substitution, backticks, backslashes, SQL wildcards, and look-alikes.
const MYSQL_PASSWORD = `m'"; ${sub(1)} ${tick(2)} \\ %_ ＇＂＼ --`;
const WP_DB_PASSWORD = `w'"; ${sub(3)} ${tick(4)} \\$x \\' <?php`;
const WP_ADMIN_PASSWORD = `a'"; ${sub(5)} ${tick(6)} \\ <b>&amp; %s`;
// PostgreSQL hashes the SASLprep form of a password; ASCII keeps this test's verifier check exact.
const PG_PASSWORD = `p'"; ${sub(7)} ${tick(8)} \\ $$ :var`;

describe('hostile values on a real server (issue 3 item 8)', () => {
  let h: Harness;
  const sites: Record<string, JsonBody> = {};

  beforeAll(async () => {
    h = await Harness.start({ username: user });
    await h.registerServer();
  });
  afterAll(async () => {
    await h?.stop();
    await removeSystemUser(user, id);
    for (let n = 1; n <= 9; n++) await run('rm', ['-f', canary(n)]);
  });

  it('refuses line breaks, NUL and names outside their alphabet with 422, listing every field', async () => {
    const before = (await h.api('GET', `/api/v1/sites?server=${h.server}`)).body.data.length;
    const cases: [string, string, Record<string, unknown>, string][] = [
      [
        'php',
        `ok-${id}.siteplane.test`,
        { shouldCreateDatabaseAndUser: true, databasePassword: 'line\nbreak1' },
        'options.databasePassword',
      ],
      [
        'php',
        `ok-${id}.siteplane.test`,
        { shouldCreateDatabaseAndUser: true, databasePassword: 'nul\0byte12' },
        'options.databasePassword',
      ],
      [
        'wordpress',
        `ok-${id}.siteplane.test`,
        { wpAdminSetup: { title: 't', adminUser: 'admin', adminPassword: 'crlf\r\nbreak', adminEmail: 'a@example.com' } },
        'options.wpAdminSetup.adminPassword',
      ],
      [
        'wordpress',
        `ok-${id}.siteplane.test`,
        {
          wpAdminSetup: {
            title: "two\nlines'",
            adminUser: "admin';--",
            adminPassword: 'long-enough',
            adminEmail: 'a@example.com',
          },
        },
        'options.wpAdminSetup.adminUser',
      ],
      [
        'php',
        `ok-${id}.siteplane.test`,
        { shouldCreateDatabaseAndUser: true, databaseUser: "u';DROP USER root;--" },
        'options.databaseUser',
      ],
      [
        'php',
        `ok-${id}.siteplane.test`,
        { shouldCreateDatabaseAndUser: true, database: 'db`; DROP DATABASE mysql' },
        'options.database',
      ],
      ['static-html', `evil-${id}.siteplane.test;id`, {}, 'domain'],
      ['static-html', `$(id)-${id}.siteplane.test`, {}, 'domain'],
      // Cyrillic "е" and "о": looks like the ASCII name, is not.
      ['static-html', `ехаmple-${id}.siteplane.tеst`, {}, 'domain'],
      ['static-html', `ok-${id}.siteplane.test`, { webDirectory: '../../../etc' }, 'options.webDirectory'],
    ];
    for (const [type, domain, options, field] of cases) {
      const res = await h.postSite(type, domain, options);
      expect(res.status, `${field}: ${JSON.stringify(res.body)}`).toBe(422);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    // The wpAdminSetup case with two bad fields reports both.
    const both = await h.postSite('wordpress', `ok-${id}.siteplane.test`, cases[3]![2]);
    expect(both.body.errors.map((e: { field: string }) => e.field)).toEqual(
      expect.arrayContaining(['options.wpAdminSetup.title', 'options.wpAdminSetup.adminUser']),
    );
    expect((await h.api('GET', `/api/v1/sites?server=${h.server}`)).body.data).toHaveLength(before);
    expect(pathKind(`/home/${user}`)).toBeNull();
  });

  it('stores hostile passwords and uses them literally: MariaDB, PostgreSQL and WordPress log in with exactly them', async () => {
    sites.php = await h.createSite('php', `hostile-php-${id}.siteplane.test`, {
      shouldCreateDatabaseAndUser: true,
      database: `hx_${id}`,
      databaseUser: `hx_${id}`,
      databasePassword: MYSQL_PASSWORD,
    });
    sites.wordpress = await h.createSite('wordpress', `hostile-wp-${id}.siteplane.test`, {
      database: `hw_${id}`,
      databaseUser: `hw_${id}`,
      databasePassword: WP_DB_PASSWORD,
      wpAdminSetup: {
        title: `<script>alert(1)</script> '"; ${sub(9)}`,
        adminUser: 'admin',
        adminPassword: WP_ADMIN_PASSWORD,
        adminEmail: 'admin@example.com',
      },
    });
    sites.adonis = await h.createSite('adonis', `hostile-adonis-${id}.siteplane.test`, {
      site_type_version: 6,
      shouldCreateDatabaseAndUser: true,
      database: `hp_${id}`,
      databaseUser: `hp_${id}`,
      databasePassword: PG_PASSWORD,
    });
    const outcomes = await Promise.allSettled(Object.values(sites).map((s) => h.waitInstalled(s, 90_000)));
    expect(outcomes.flatMap((o) => (o.status === 'rejected' ? [String(o.reason)] : []))).toEqual([]);

    // The records never show a password.
    for (const site of Object.values(sites)) {
      const shown = JSON.stringify((await h.api('GET', `/api/v1/sites/${site.uuid}`)).body);
      for (const secret of [MYSQL_PASSWORD, WP_DB_PASSWORD, WP_ADMIN_PASSWORD, PG_PASSWORD]) expect(shown).not.toContain(secret);
    }

    expect((await mysqlLogin(`hx_${id}`, MYSQL_PASSWORD))?.databases).toContain(`hx_${id}`);
    expect((await mysqlLogin(`hx_${id}`, MYSQL_PASSWORD, 'socket'))?.currentUser).toBe(`hx_${id}@localhost`);
    expect(await mysqlLogin(`hx_${id}`, MYSQL_PASSWORD.replace('\\', ''))).toBeNull();
    expect((await mysqlLogin(`hw_${id}`, WP_DB_PASSWORD))?.databases).toContain(`hw_${id}`);

    const role = await pgRole(`hp_${id}`);
    expect(pgVerifierMatches(role!.secret, PG_PASSWORD, `hp_${id}`)).toBe(true);
    expect(pgVerifierMatches(role!.secret, PG_PASSWORD.replace("'", "''"), `hp_${id}`)).toBe(false);
    expect(await pgLogin(`hp_${id}`, PG_PASSWORD, `hp_${id}`)).toBe(`hp_${id}`);

    // WordPress: its front page (the title escaped), then a real login through nginx and PHP-FPM.
    const domain = `hostile-wp-${id}.siteplane.test`;
    const front = await curlUntil(domain, '/', (r) => r.status === 200 && r.body.includes('alert(1)'));
    expect(front.body).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(front.body).not.toContain('<script>alert(1)</script>');
    const login = (password: string) =>
      curlSite(domain, '/wp-login.php', [
        '-b',
        'wordpress_test_cookie=WP%20Cookie%20check',
        '--data-urlencode',
        'log=admin',
        '--data-urlencode',
        `pwd=${password}`,
        '--data-urlencode',
        'testcookie=1',
      ]);
    const ok = await login(WP_ADMIN_PASSWORD);
    expect(ok.status, ok.body.slice(0, 500)).toBe(302);
    expect(ok.headers).toMatch(/^Set-Cookie: wordpress_logged_in_[0-9a-f]+=admin%7C/im);
    expect(ok.headers).toMatch(/^Location: http:\/\/hostile-wp-[0-9a-f]+\.siteplane\.test\/wp-admin\/?\r?$/im);
    const wrong = await login(WP_ADMIN_PASSWORD.replace(/\\/g, ''));
    expect(wrong.status).toBe(200);
    expect(wrong.headers).not.toMatch(/wordpress_logged_in_/i);

    // Nothing in any value ran as a command, on the server or anywhere on this machine.
    for (let n = 1; n <= 9; n++) expect(pathKind(canary(n)), canary(n)).toBeNull();
  }, 150_000);

  it('deletes them with their databases and users', async () => {
    for (const site of Object.values(sites)) {
      const del = await h.deleteSite(site.uuid, true);
      await h.waitGone(site, del.operation.uuid);
    }
    expect(await mysqlUserHosts(`hx_${id}`)).toEqual([]);
    expect(await mysqlUserHosts(`hw_${id}`)).toEqual([]);
    expect(await pgRole(`hp_${id}`)).toBeNull();
    expect(await pgDatabaseExists(`hp_${id}`)).toBe(false);
  }, 90_000);
});
