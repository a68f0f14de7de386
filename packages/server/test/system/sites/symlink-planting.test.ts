import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutorProbe, Harness, type JsonBody, removeSystemUser, runId } from './support/harness.js';
import { listDir, mustRun, pathKind, run } from './support/host.js';

/**
 * Issue 10 item 7 "root never follows a path the site user controls", on a real server over SSH.
 * The site user is hostile: while a create runs, and between a failed create and its retry, it
 * plants symlinks (as itself, with `runuser`) at every place in its tree where root used to read
 * or write — wp-config.php, Strapi's .env, the install marker, `public`, `releases`, the PM2
 * ecosystem file — pointing at a root-only file, at nginx's sites-enabled and at a directory of
 * root's. Whatever happens to the operation (installed, or failed saying why), no file outside the
 * site's tree is created, changed or removed, and nothing root-only reaches an operation log.
 *
 * The races are made deterministic through the executor: a hook plants the link just before the
 * command that writes the path runs (the write is the second command naming it; the first is the
 * step's probe), as a user with a loop in a shell could.
 */
const id = runId();
const user = `spl${id}`;
const home = `/home/${user}`;
const SECRET = `/root/siteplane-secret-${id}`;
const SECRET_TEXT = `root only ${id} s3cr3t`;
const CANARY = `/root/siteplane-canary-${id}`;
const PWNED = `/etc/nginx/sites-enabled/pwned-${id}`;
const domain = (name: string) => `${name}-${id}.siteplane.test`;

/**
 * What must not change: the secret file (content, mtime, owner, mode), root's and nginx's
 * directories. Left out: the sites' own vhosts (of this run or another suite's on the same host),
 * the secrets and canaries of other runs of this file, and root's npm cache (root's own npm, which
 * installs PM2, makes it).
 */
async function outside(): Promise<Record<string, string>> {
  const ownSite = (name: string) => name.endsWith('.siteplane.test.conf');
  const othersRun = (name: string) =>
    name === '.npm' || (/^(siteplane-secret|siteplane-canary|pwned)-[0-9a-f]{6}$/.test(name) && !name.endsWith(`-${id}`));
  const stat = await run('stat', ['-c', '%Y %s %a %U:%G %F', '--', SECRET]);
  const sum = await run('sha256sum', ['--', SECRET]);
  const canary = await run('find', [CANARY, '-printf', '%p %y %s %T@\\n']);
  return {
    secret: `${stat.stdout.trim()} ${sum.stdout.trim()}`,
    root: (await listDir('/root')).filter((n) => !othersRun(n)).join(' '),
    canary: canary.stdout,
    sitesEnabled: (await listDir('/etc/nginx/sites-enabled')).filter((n) => !ownSite(n) && !othersRun(n)).join(' '),
    sitesAvailable: (await listDir('/etc/nginx/sites-available')).filter((n) => !ownSite(n)).join(' '),
    confD: (await listDir('/etc/nginx/conf.d')).join(' '),
  };
}

/** As the site user (what a hostile owner can do), never as root. */
async function asUser(...argv: string[]): Promise<void> {
  await mustRun('runuser', ['-u', user, '--', ...argv]);
}

/** `ln -s -f -n target link` as the site user: replaces whatever file or link is at `link`. */
function plant(link: string, target: string): Promise<void> {
  return asUser('ln', '-s', '-f', '-n', '--', target, link);
}

/**
 * A hook that plants `link → target` before every command naming `path` after the first (the
 * probe): before the write, and again before a second command of a two-step write (`install`
 * then `dd`), so a write that reopens the path by name meets the link.
 */
function plantBeforeWrites(probe: ExecutorProbe, plants: { path: string; target: string }[]): Map<string, number> {
  const seen = new Map<string, number>();
  const planted = new Map<string, number>();
  probe.hook = async (argv, phase) => {
    if (phase !== 'before') return;
    for (const { path, target } of plants) {
      if (!argv.some((arg) => arg.includes(path))) continue;
      const count = (seen.get(path) ?? 0) + 1;
      seen.set(path, count);
      if (count < 2) continue;
      await plant(path, target);
      planted.set(path, (planted.get(path) ?? 0) + 1);
    }
  };
  return planted;
}

/** Every log line and error of the site's operations, to look for what root may have read. */
async function operationText(h: Harness, operations: string[]): Promise<string> {
  const views = await Promise.all(operations.map((uuid) => h.operation(uuid)));
  return JSON.stringify(views);
}

/** installed, or failed with an error that says what (no bare exit code). */
function settledClearly(site: JsonBody): void {
  expect(['installed', 'failed']).toContain(site.status);
  if (site.status === 'failed') expect(String(site.failure?.message ?? '')).toMatch(/\S{10,}/);
}

describe('root never follows a path the site user controls (issue 10 item 7)', () => {
  const probe = new ExecutorProbe();
  let h: Harness;

  beforeAll(async () => {
    await mustRun('sh', ['-c', 'umask 077 && printf "%s\\n" "$2" > "$1"', 'sh', SECRET, SECRET_TEXT]);
    await mustRun('mkdir', ['-p', '-m', '0700', `${CANARY}/strapi`]);
    await mustRun('sh', ['-c', 'printf keep > "$1"', 'sh', `${CANARY}/strapi/keep`]);
    // What the site directory step looks for below `releases` and beside it, so that a retry with
    // `releases` pointing here reaches the Strapi step.
    await mustRun('mkdir', ['-p', '-m', '0700', `${CANARY}/initial`]);
    h = await Harness.start({ username: user, probe });
    await h.registerServer();
  });
  afterAll(async () => {
    probe.hook = null;
    // First: a file written through a link into sites-enabled (what this test catches) breaks every
    // later `nginx -t` on the host, this suite's sweep included.
    await run('rm', ['-rf', '--', SECRET, CANARY, PWNED]);
    await h?.stop();
    await removeSystemUser(user, id);
  }, 600_000);

  it('WordPress: wp-config.php made a link to a root-only file while it is written: the link is replaced, not written through', async () => {
    const name = domain('wp');
    const config = `${home}/${name}/releases/initial/wp-config.php`;
    // nginx is installed by this first site (its own sites-enabled/default comes with it): compare root's files.
    const before = await outside();
    const planted = plantBeforeWrites(probe, [{ path: config, target: SECRET }]);
    const site = await h.createSite('wordpress', name, {
      database: `wp_${id}`,
      databaseUser: `wp_${id}`,
      databasePassword: 'wp-Links-456',
      wpAdminSetup: { title: `Links ${id}`, adminUser: 'admin', adminPassword: 'wp-Admin-789', adminEmail: 'a@example.com' },
    });
    const done = await h.waitFor(site.uuid, ['installed', 'failed'], 1_200_000);
    probe.hook = null;
    settledClearly(done);
    // The link was there when the write ran; the write replaced it.
    expect(planted.get(config)).toBeGreaterThanOrEqual(1);
    expect(pathKind(config)).toBe('file');
    expect(done.status).toBe('installed');
    const after = await outside();
    expect({ secret: after.secret, root: after.root, canary: after.canary }).toEqual({
      secret: before.secret,
      root: before.root,
      canary: before.canary,
    });
    expect(await listDir('/etc/nginx/sites-enabled')).not.toContain('wp-config.php');
    expect(await operationText(h, [site.operation.uuid])).not.toContain(SECRET_TEXT);
    // The site's own file holds its configuration, not root's secret.
    const written = await run('cat', ['--', config]);
    expect(written.stdout).not.toContain(SECRET_TEXT);
    if (done.status === 'installed') expect(written.stdout).toContain('DB_NAME');
  }, 1_300_000);

  it('static-html: `public` made a link to sites-enabled before a retry: nothing is created there', async () => {
    const name = domain('html');
    const vhost = `/etc/nginx/sites-available/${name}.conf`;
    // A vhost Siteplane did not make: the create stops at its last step, after the site's tree exists.
    await mustRun('sh', ['-c', 'echo "# not Siteplane\'s" > "$1"', 'sh', vhost]);
    const site = await h.createSite('static-html', name, { webDirectory: 'public' });
    const failed = await h.waitFor(site.uuid, ['installed', 'failed'], 300_000);
    expect(failed).toMatchObject({ status: 'failed', failure: { step: 'ensure nginx vhost' } });
    const snapshot = await outside();

    const web = `${home}/${name}/releases/initial/public`;
    await asUser('rm', '-rf', '--', web);
    await plant(web, '/etc/nginx/sites-enabled');
    await mustRun('rm', ['-f', '--', vhost]);
    const retried = await h.api('POST', `/api/v1/sites/${site.uuid}/retry`);
    expect(retried.status).toBe(202);
    const done = await h.waitFor(site.uuid, ['installed', 'failed'], 300_000);
    settledClearly(done);
    const after = await outside();
    expect(after).toEqual(snapshot);
    expect(await listDir('/etc/nginx/sites-enabled')).not.toContain('index.html');
    expect(await operationText(h, [site.operation.uuid, retried.body.operation.uuid])).not.toContain(SECRET_TEXT);
  }, 400_000);

  it('Strapi: .env and the install marker made links while written; then releases → a directory of root, the ecosystem file → a root-only file before a retry; then removal', async () => {
    const name = domain('strapi');
    const root = `${home}/${name}`;
    const release = `${root}/releases/strapi`;
    const vhost = `/etc/nginx/sites-available/${name}.conf`;
    await mustRun('sh', ['-c', 'echo "# not Siteplane\'s" > "$1"', 'sh', vhost]);
    const snapshot = await outside();

    const planted = plantBeforeWrites(probe, [
      { path: `${release}/.env`, target: SECRET },
      { path: `${release}/.siteplane-installed`, target: PWNED },
    ]);
    const site = await h.createSite('strapi', name, { site_type_version: 5 });
    const first = await h.waitFor(site.uuid, ['installed', 'failed'], 2_400_000);
    probe.hook = null;
    settledClearly(first);
    expect(await outside()).toEqual(snapshot);
    // Installed up to the vhost Siteplane did not make; both links were there when their writes ran.
    expect(first).toMatchObject({ status: 'failed', failure: { step: 'ensure nginx vhost' } });
    expect(planted.get(`${release}/.env`)).toBeGreaterThanOrEqual(1);
    expect(planted.get(`${release}/.siteplane-installed`)).toBeGreaterThanOrEqual(1);
    expect(pathKind(`${release}/.env`)).toBe('file');
    expect(pathKind(`${release}/.siteplane-installed`)).toBe('file');
    expect(await run('cat', ['--', `${release}/.env`]).then((r) => r.stdout)).not.toContain(SECRET_TEXT);

    // The user takes the install back to "unfinished" and points releases at a directory of root's
    // that holds a `strapi` (root used to `rm -rf releases/strapi` then).
    await asUser('rm', '-f', '--', `${release}/.siteplane-installed`);
    await asUser('mv', '-T', '--', `${root}/releases`, `${root}/releases.mine`);
    await plant(`${root}/releases`, CANARY);
    const retried = await h.api('POST', `/api/v1/sites/${site.uuid}/retry`);
    expect(retried.status).toBe(202);
    const second = await h.waitFor(site.uuid, ['installed', 'failed'], 2_400_000);
    settledClearly(second);
    expect(await outside()).toEqual(snapshot);
    const operations = [site.operation.uuid, retried.body.operation.uuid];

    // Releases back, install marked again; the ecosystem file a link to the secret and its backup
    // name a link into sites-enabled (root used to hash the file and `cp -p` it to the backup).
    await asUser('rm', '-f', '--', `${root}/releases`);
    await asUser('mv', '-T', '--', `${root}/releases.mine`, `${root}/releases`);
    await asUser('touch', '--', `${release}/.siteplane-installed`);
    await asUser('rm', '-f', '--', `${root}/ecosystem.config.cjs`);
    await plant(`${root}/ecosystem.config.cjs`, SECRET);
    await plant(`${root}/ecosystem.config.cjs.siteplane-previous`, PWNED);
    await mustRun('rm', ['-f', '--', vhost]);
    const third = await h.api('POST', `/api/v1/sites/${site.uuid}/retry`);
    expect(third.status).toBe(202);
    operations.push(third.body.operation.uuid);
    const installed = await h.waitFor(site.uuid, ['installed', 'failed'], 600_000);
    settledClearly(installed);
    expect(await outside()).toEqual(snapshot);
    // The ecosystem file was written as the user over the link; the site runs.
    expect(installed.status).toBe('installed');
    expect(pathKind(`${root}/ecosystem.config.cjs`)).toBe('file');
    expect(await operationText(h, operations)).not.toContain(SECRET_TEXT);

    // Removal: a link inside the tree to root's directory; rm -rf of the tree never follows it.
    await plant(`${root}/shared/into-root`, CANARY);
    const del = await h.deleteSite(site.uuid, true);
    const gone = await h.waitFor(site.uuid, ['gone', 'delete_failed'], 300_000);
    expect(gone.status).toBe('gone');
    operations.push(del.operation.uuid);
    const after = await outside();
    expect(after).toEqual(snapshot);
    expect(await operationText(h, operations)).not.toContain(SECRET_TEXT);
  }, 5_400_000);
});
