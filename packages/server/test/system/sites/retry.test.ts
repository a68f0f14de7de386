import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mysqlDatabaseExists, mysqlRoot, mysqlUserHosts } from './support/databases.js';
import { Harness, type JsonBody, removeSystemUser, runId } from './support/harness.js';
import { curlSite, curlUntil, listDir, mustRun, pathKind, run } from './support/host.js';

/**
 * Issue 3 item 7 "retrying resumes where it stopped", on a real server over SSH: a WordPress
 * create fails because WORDPRESS_SOURCE names a directory that is not there yet; the operator
 * puts it there (a copy of Debian's wordpress tree) and POSTs …/retry. The steps that had
 * succeeded find their work done (user, database, site directory), the rest runs, and the server
 * holds one of everything. Deleted with deleteDatabase, nothing of it is left.
 */
const id = runId();
const user = `spy${id}`;
const domain = `retry-${id}.siteplane.test`;
const database = `wp_${id}`;
const source = `/tmp/siteplane-wp-src-${id}`;
const title = `Retried ${id}`;
const POOLS = '/etc/php/8.2/fpm/pool.d';

describe('a failed WordPress create is retried where it stopped (issue 3 item 7)', () => {
  let h: Harness;
  let site: JsonBody;
  let retried: JsonBody;

  beforeAll(async () => {
    h = await Harness.start({ username: user, env: { WORDPRESS_SOURCE: source } });
    await h.registerServer();
  });
  afterAll(async () => {
    await h?.stop();
    await run('rm', ['-rf', '--', source]);
    await removeSystemUser(user, id);
  });

  it('fails at the WordPress files step while the source directory is missing; the site says why', async () => {
    expect(pathKind(source)).toBeNull();
    site = await h.createSite('wordpress', domain, {
      database,
      databaseUser: database,
      databasePassword: 'wp-Retry-456',
      wpAdminSetup: { title, adminUser: 'admin', adminPassword: 'wp-Admin-789', adminEmail: 'a@example.com' },
    });
    const failed = await h.waitFor(site.uuid, ['failed', 'installed'], 120_000);
    // Not a command that failed (no exit code): the step found no directory where the source should be.
    const failure = {
      operation: site.operation.uuid,
      step: 'ensure WordPress files',
      exit_code: null,
      message: `WordPress source ${source} is not a directory on the server (install the distribution's package, or set an archive URL)`,
    };
    expect(failed).toMatchObject({ status: 'failed', failure });
    const op = await h.operation(site.operation.uuid);
    expect(op).toMatchObject({ status: 'failed', error: failure });
    expect(op.steps.map((s) => [s.name, s.status])).toEqual([
      ['ensure system user', 'succeeded'],
      ['ensure nginx', 'succeeded'],
      ['ensure PHP 8.2', 'succeeded'],
      ['ensure database engine', 'succeeded'],
      ['ensure database and user', 'succeeded'],
      ['ensure site directory', 'succeeded'],
      ['ensure WordPress files', 'failed'],
    ]);
    const lines = op.logs.map((l) => l.line);
    expect(lines).toContain(`created system user ${user} with home /home/${user}`);
    expect(lines).toContain(`created MySQL database ${database}`);
    // Nothing of the later steps reached the server.
    expect(pathKind(`/etc/nginx/sites-available/${domain}.conf`)).toBeNull();
    expect(pathKind(`${POOLS}/${user}.conf`)).toBeNull();
  }, 150_000);

  it('once the source is there, POST …/retry → 202 → installed, served, with one of everything', async () => {
    // Dereferenced: Debian's tree links into /usr/share/php and /etc/wordpress, relative links
    // that would dangle in another directory.
    await mustRun('cp', ['-RL', '--', '/usr/share/wordpress', source]);
    const res = await h.api('POST', `/api/v1/sites/${site.uuid}/retry`);
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      status: 'pending',
      operation: { kind: 'create', status: 'queued' },
      failure: { operation: site.operation.uuid, step: 'ensure WordPress files' },
    });
    retried = res.body.operation;
    const done = await h.waitInstalled({ ...site, operation: retried }, 150_000);
    expect(done).toMatchObject({ status: 'installed', failure: null, operation: { uuid: retried.uuid } });

    const op = await h.operation(retried.uuid);
    expect(op.steps.every((s) => s.status === 'succeeded')).toBe(true);
    expect(op.steps.map((s) => s.name).slice(-4)).toEqual([
      'ensure wp-config.php',
      'run the WordPress installer',
      'ensure PHP-FPM pool',
      'ensure nginx vhost',
    ]);
    const lines = op.logs.map((l) => l.line);
    // After the line naming the process that ran it, the first word is why it runs again.
    expect(lines[0]).toMatch(/^run by worker-.+ \(attempt 1\)$/);
    expect(lines[1]).toBe(
      `retrying after operation ${site.operation.uuid} failed at step ensure WordPress files; steps already done are checked and left as they are`,
    );
    // The steps that had succeeded checked and left their work as it was.
    expect(lines).toContain(`system user ${user} exists`);
    expect(lines).toContain(`MySQL database ${database} exists`);
    expect(lines).toContain(`copied WordPress from ${source}, links resolved`);
    expect(lines.some((l) => l.startsWith('created system user') || l.startsWith('created MySQL database'))).toBe(false);

    const page = await curlUntil(domain, '/', (r) => r.body.includes(title));
    expect(page.status).toBe(200);
    expect(page.body).toContain(title);

    // One vhost, one pool, one database, one database user (its two hosts), one ledger entry each.
    expect((await listDir('/etc/nginx/sites-available')).filter((f) => f.includes(domain))).toEqual([`${domain}.conf`]);
    expect((await listDir('/etc/nginx/sites-enabled')).filter((f) => f.includes(domain))).toEqual([`${domain}.conf`]);
    expect((await listDir(POOLS)).filter((f) => f.includes(user))).toEqual([`${user}.conf`]);
    expect(await mysqlRoot(`SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE '%${id}%';`)).toEqual([
      [database],
    ]);
    expect(await mysqlRoot(`SELECT DISTINCT User FROM mysql.user WHERE User LIKE '%${id}%';`)).toEqual([[database]]);
    expect(await mysqlUserHosts(database)).toEqual(['127.0.0.1', 'localhost']);
    // The failed attempt's unfinished copy is gone; the release holds WordPress.
    const siteRoot = `/home/${user}/${domain}`;
    const leftovers = await mustRun('find', [siteRoot, '-maxdepth', '2', '-name', '*.siteplane-new']);
    expect(leftovers.stdout).toBe('');
    expect(pathKind(`${siteRoot}/current/wp-settings.php`)).toBe('file');
    const ledger = await h.service.storage.db
      .selectFrom('site_resources')
      .select(['kind', 'ref'])
      .where('site_uuid', '=', site.uuid)
      .execute();
    const keys = ledger.map((r) => `${r.kind} ${r.ref}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys).toEqual(
      expect.arrayContaining([`nginx_vhost /etc/nginx/sites-available/${domain}.conf`, `database ${database}`]),
    );
  }, 180_000);

  it('deleted with deleteDatabase: nothing of it is left on the server', async () => {
    const del = await h.deleteSite(site.uuid, true);
    await h.waitGone(site, del.operation.uuid, 90_000);
    expect((await h.api('GET', `/api/v1/sites/${site.uuid}`)).status).toBe(404);
    expect(pathKind(`/home/${user}/${domain}`)).toBeNull();
    expect(pathKind(`/etc/nginx/sites-available/${domain}.conf`)).toBeNull();
    expect(pathKind(`/etc/nginx/sites-enabled/${domain}.conf`)).toBeNull();
    expect(pathKind(`/var/log/nginx/${domain}.access.log`)).toBeNull();
    // Its user's only PHP site: the pool and its socket went with it.
    expect(pathKind(`${POOLS}/${user}.conf`)).toBeNull();
    expect(pathKind(`/run/php/php8.2-fpm-${user}.sock`)).toBeNull();
    expect(await mysqlDatabaseExists(database)).toBe(false);
    expect(await mysqlUserHosts(database)).toEqual([]);
    expect((await curlSite(domain)).body).not.toContain(title);
  }, 120_000);
});
