import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostPhp } from '../support/test-host.js';
import { Harness, type JsonBody, removeSystemUser, runId } from './support/harness.js';
import { curlSite, curlUntil, mustRun, run, server } from './support/host.js';

/**
 * Issue 10 item 9 "isolation between site users", on a real server over SSH: two server users on
 * one server, a PHP site each. User B — over the shell and from a PHP script served by B's own
 * FPM pool — tries to reach what belongs to A: A's home and site files, A's PHP temp files and
 * session files, and /tmp as a channel between them. Everything is refused: by file modes (A's
 * home 0710 and site root 0750, group www-data; A's temp and session directories 0700) and, for
 * PHP, by open_basedir (B's pool reaches B's home and /usr/share/php only). nginx (www-data)
 * still serves both sites, static files and PHP.
 *
 * Before this change homes were 0755 (or o+x), site roots 0755 and the pools had no open_basedir
 * and PHP's shared temp and session directories: B's script read A's file, listed A's home and
 * wrote /tmp, and `runuser -u B -- cat` read A's page.
 */
const id = runId();
const userA = `spia${id}`;
const userB = `spib${id}`;
const domainA = `iso-a-${id}.siteplane.test`;
const domainB = `iso-b-${id}.siteplane.test`;
const domainNode = `iso-n-${id}.siteplane.test`;
const homeA = `/home/${userA}`;
const homeB = `/home/${userB}`;
const rootA = `${homeA}/${domainA}`;
const rootB = `${homeB}/${domainB}`;
const SECRET = `secret-of-a-${id}`;

/** Writes a file into a site's web root as its user (the way a deployment would). */
async function writeAs(user: string, path: string, content: string): Promise<void> {
  await mustRun('runuser', ['-u', user, '--', 'dd', `of=${path}`, 'status=none'], { input: content });
}

async function stat(path: string): Promise<string> {
  return (await mustRun('stat', ['-c', '%a %U %G', '--', path])).stdout.trim();
}

async function jsonFrom(domain: string, path: string): Promise<JsonBody> {
  const answer = await curlSite(domain, path);
  expect(answer.status, answer.body).toBe(200);
  return JSON.parse(answer.body) as JsonBody;
}

describe('isolation between site users (issue 10 item 9)', () => {
  let h: Harness;
  let siteA: JsonBody;
  let siteB: JsonBody;
  let siteNode: JsonBody;
  /** What A's PHP left behind: a temp file and a session file. */
  let aTemp = '';
  let aSession = '';

  beforeAll(async () => {
    h = await Harness.start({ username: userA });
    await h.registerServer();
    const second = await h.api('POST', `/api/v1/servers/${h.server}/users`, { username: userB });
    expect(second.status, JSON.stringify(second.body)).toBe(201);
    siteA = await h.createSite('php', domainA);
    const posted = await h.api('POST', '/api/v1/sites', {
      server: h.server,
      serverUser: second.body.uuid,
      type: 'php',
      domain: domainB,
      ssl: false,
      options: {},
    });
    expect(posted.status, JSON.stringify(posted.body)).toBe(202);
    siteB = posted.body;
    siteNode = await h.createSite('nodejs-ssr', domainNode);
    // The first site on a fresh host installs nginx and PHP (and Node, PM2).
    await h.waitInstalled(siteA, 15 * 60_000);
    await h.waitInstalled(siteB, 5 * 60_000);
    await h.waitInstalled(siteNode, 15 * 60_000);
  }, 25 * 60_000);

  afterAll(async () => {
    await h?.stop();
    await removeSystemUser(userA, id);
    await removeSystemUser(userB, id);
  }, 180_000);

  it('homes are 0710 and site roots 0750, group www-data; the PHP temp and session directories 0700', async () => {
    for (const [user, home, root] of [
      [userA, homeA, rootA],
      [userB, homeB, rootB],
    ] as const) {
      expect(await stat(home)).toBe(`710 ${user} www-data`);
      expect(await stat(root)).toBe(`750 ${user} www-data`);
      expect(await stat(`${home}/.siteplane`)).toBe(`700 ${user} ${user}`);
      expect(await stat(`${home}/.siteplane/tmp`)).toBe(`700 ${user} ${user}`);
      expect(await stat(`${home}/.siteplane/sessions`)).toBe(`700 ${user} ${user}`);
    }
  });

  it("nginx still serves both sites: the placeholder pages (static) and PHP run as each site's user", async () => {
    for (const [user, domain, root] of [
      [userA, domainA, rootA],
      [userB, domainB, rootB],
    ] as const) {
      expect((await curlUntil(domain, '/', (r) => r.status === 200)).body).toContain(`${domain} is ready`);
      await writeAs(user, `${root}/current/whoami.php`, '<?php echo json_encode(posix_getpwuid(posix_geteuid())["name"]);');
      expect(await jsonFrom(domain, '/whoami.php')).toBe(user);
    }
  });

  it("A's PHP keeps its temp and session files in A's own directories", async () => {
    await writeAs(userA, `${rootA}/current/secret.txt`, `${SECRET}\n`);
    await writeAs(
      userA,
      `${rootA}/current/leave.php`,
      `<?php
session_start();
$_SESSION['secret'] = ${JSON.stringify(SECRET)};
$temp = tempnam(sys_get_temp_dir(), 'a');
file_put_contents($temp, ${JSON.stringify(SECRET)});
echo json_encode([
  'temp' => $temp,
  'session' => session_save_path() . '/sess_' . session_id(),
  'tmpdir' => getenv('TMPDIR'),
  'upload' => ini_get('upload_tmp_dir'),
]);
session_write_close();`,
    );
    const left = await jsonFrom(domainA, '/leave.php');
    expect(left.temp).toMatch(new RegExp(`^${homeA}/\\.siteplane/tmp/a`));
    expect(left.session).toMatch(new RegExp(`^${homeA}/\\.siteplane/sessions/sess_[A-Za-z0-9,-]+$`));
    expect(left.tmpdir).toBe(`${homeA}/.siteplane/tmp`);
    expect(left.upload).toBe(`${homeA}/.siteplane/tmp`);
    aTemp = left.temp;
    aSession = left.session;
    // They are there, with the secret in them (read as A).
    expect((await mustRun('runuser', ['-u', userA, '--', 'cat', aTemp])).stdout).toBe(SECRET);
    expect((await mustRun('runuser', ['-u', userA, '--', 'cat', aSession])).stdout).toContain(SECRET);
  });

  it("B's PHP is confined by open_basedir: A's files, A's home, A's temp and session files, /tmp are all refused", async () => {
    const probe = `/tmp/siteplane-iso-${id}`;
    await writeAs(
      userB,
      `${rootB}/current/probe.php`,
      `<?php
$read = fn ($path) => @file_get_contents($path) !== false;
echo json_encode([
  'open_basedir' => ini_get('open_basedir'),
  'temp_dir' => sys_get_temp_dir(),
  'session_path' => session_save_path(),
  'own_file' => $read(__FILE__),
  'own_temp' => ($t = @tempnam(sys_get_temp_dir(), 'b')) !== false && str_starts_with($t, ${JSON.stringify(`${homeB}/`)}),
  'a_site_file' => $read(${JSON.stringify(`${rootA}/current/secret.txt`)}),
  'a_home_listing' => @scandir(${JSON.stringify(homeA)}) !== false,
  'a_temp' => $read(${JSON.stringify(aTemp)}),
  'a_session' => $read(${JSON.stringify(aSession)}),
  'write_tmp' => @file_put_contents(${JSON.stringify(probe)}, 'b') !== false,
  'read_tmp' => $read('/tmp'),
  'a_pool_config' => $read(${JSON.stringify(`/etc/php/${hostPhp(server())}/fpm/pool.d/${userA}.conf`)}),
]);`,
    );
    const seen = await jsonFrom(domainB, '/probe.php');
    expect(seen).toEqual({
      open_basedir: `${homeB}/:/usr/share/php/`,
      temp_dir: `${homeB}/.siteplane/tmp`,
      session_path: `${homeB}/.siteplane/sessions`,
      own_file: true,
      own_temp: true,
      a_site_file: false,
      a_home_listing: false,
      a_temp: false,
      a_session: false,
      write_tmp: false,
      read_tmp: false,
      a_pool_config: false,
    });
    expect((await run('stat', ['--', probe])).code).not.toBe(0);
  });

  it("over the shell, B can neither list A's home nor read A's site, temp or session files", async () => {
    for (const argv of [
      ['ls', homeA],
      ['ls', rootA],
      ['cat', `${rootA}/current/secret.txt`],
      ['cat', `${rootA}/current/index.html`],
      ['cat', aTemp],
      ['cat', aSession],
      ['ls', `${homeA}/.siteplane/sessions`],
    ]) {
      const tried = await run('runuser', ['-u', userB, '--', ...argv]);
      expect(tried.code, `${argv.join(' ')}: ${tried.stdout}`).not.toBe(0);
      expect(tried.stderr).toContain('Permission denied');
      expect(tried.stdout).not.toContain(SECRET);
    }
    // While nginx (www-data) reads A's files: that is what the group is for.
    expect((await curlSite(domainA, '/secret.txt')).body).toContain(SECRET);
  });

  it("through nginx, B's links to A's files are refused; B's links to B's own files are served", async () => {
    // nginx reads every site (www-data), so a link B plants in B's web root would have nginx serve
    // A's files as B's: A's secret, A's PHP source as text, A's whole tree through a directory link.
    // The vhosts follow a link only to a file of the link's owner (disable_symlinks if_not_owner).
    const webB = `${rootB}/current`;
    for (const [link, target] of [
      ['stolen.txt', `${rootA}/current/secret.txt`],
      ['stolen-source.txt', `${rootA}/current/whoami.php`],
      ['a-site', `${rootA}/current`],
      ['mine.html', `${webB}/index.html`],
    ]) {
      await mustRun('runuser', ['-u', userB, '--', 'ln', '-s', '--', target!, `${webB}/${link}`]);
    }
    for (const path of ['/stolen.txt', '/stolen-source.txt', '/a-site/secret.txt', '/a-site/']) {
      const answer = await curlSite(domainB, path);
      // 404 where try_files finds no file it may open, 403 where nginx opens the path itself.
      expect([403, 404], `${path}: ${answer.status} ${answer.body}`).toContain(answer.status);
      expect(answer.body).not.toContain(SECRET);
      expect(answer.body).not.toContain('posix_getpwuid');
    }
    const mine = await curlSite(domainB, '/mine.html');
    expect(mine.status).toBe(200);
    expect(mine.body).toContain(`${domainB} is ready`);
    // A's own site is served as before, through A's own `current` link.
    expect((await curlSite(domainA, '/secret.txt')).body).toContain(SECRET);
  });

  it("A's Node site: its ecosystem file (the process's environment) is 0600 and PM2's home 0700; still served", async () => {
    const ecosystem = `${homeA}/${domainNode}/ecosystem.config.cjs`;
    expect(await stat(ecosystem)).toBe(`600 ${userA} ${userA}`);
    expect(await stat(`${homeA}/.pm2`)).toBe(`700 ${userA} ${userA}`);
    expect((await curlUntil(domainNode, '/', (r) => r.status === 200)).body).toContain(`${domainNode} is ready`);
    for (const path of [ecosystem, `${homeA}/.pm2/dump.pm2`]) {
      const tried = await run('runuser', ['-u', userB, '--', 'cat', path]);
      expect(tried.code, path).not.toBe(0);
      // Not even nginx's group, which passes through the home, reads them.
      expect((await run('runuser', ['-u', 'www-data', '--', 'cat', path])).code, path).not.toBe(0);
    }
  });
});
