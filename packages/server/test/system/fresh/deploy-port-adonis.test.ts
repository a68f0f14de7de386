import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/storage/tokens.js';
import { deployApi, fixtureFiles } from '../sites/support/deploy-api.js';
import { serveRepositories, stopServingRepositories } from '../sites/support/git-daemon.js';
import { commitAndPush } from '../sites/support/git-work-tree.js';
import { Harness, type JsonBody, removeSystemUser, runId } from '../sites/support/harness.js';
import { curlSite, curlUntil, freePort, mustRun, pathKind, pm2List, run, useHost } from '../sites/support/host.js';
import { startTestHost, stopTestHost } from '../support/test-host.js';

/**
 * Issue 11 item 7, Generic Port and Adonis with real apps from a real repository, through the API,
 * on the test host (the repositories pushed to bare ones there and served by `git daemon`, as
 * deploy-real-apps does):
 * - Generic Port: a process Siteplane knows nothing about (fixtures/generic-port-app), started by
 *   the user's start command — refused without one (422 naming startCommand), then run by PM2 as
 *   the site user with PORT set to the site's port, behind the health gate; a start command that
 *   never answers leaves the live release serving; a second deploy and a rollback, each under a
 *   stream of requests through nginx that must all be answered (the process restarts in place
 *   behind its stand-in, deploy/stand-in.ts), nothing of the stand-ins left; the process gone with
 *   the site.
 * - Adonis 6 (fixtures/adonis-app, TypeScript, the committed lock file): `npm ci` from the npm
 *   registry, `node ace build` on the server, `build/bin/server.js` run by PM2 with APP_KEY and the
 *   app's own variables from Siteplane's environment (Adonis validates them at boot); a second deploy
 *   and a rollback.
 */
// A pristine host of its own (test-host.sh index 12), so this suite runs beside the other fresh
// suites (run-tests.mjs) instead of after them on the shared host.
const HOST = 'portapps';
const host = await startTestHost(HOST, { index: 12 });
useHost(host);
const id = runId();
const user = `spg${id}`;
const GIT_BASE = `/srv/siteplane-port-git-${id}`;
const WORK = `/srv/siteplane-port-work-${id}`;
// Not deploy-end-to-end's 9418 nor deploy-real-apps' 9420: they may run at once on the shared host.
const GIT_PORT = 9421;
const FIXTURES = join(import.meta.dirname, '../sites/fixtures');
const domain = (label: string) => `${label}-${id}.siteplane.test`;
const figures: Record<string, unknown> = {};
const START = 'exec node server.mjs --label "$SITE_LABEL two"';

let h: Harness;
let token: string;

const { api, must, finished, bindToHostRepositories } = deployApi(
  () => h,
  () => token,
);

async function deploy(site: JsonBody, want: 'succeeded' | 'failed' = 'succeeded'): Promise<JsonBody> {
  const started = Date.now();
  const posted = await must(202, api('POST', `/api/v1/sites/${site.uuid}/deployments`, {}), 'POST deployments');
  const d = await finished(posted.uuid, want);
  figures[`${site.type} deploy ${d.release} (${want}) ms`] = Date.now() - started;
  return d;
}

/**
 * Asks the site through nginx, one request after another, while `work` runs: every answer must be
 * a 200 from v1 or v2 (the stand-in's or the process's); the answers by port are a figure.
 */
async function whileAsking<T>(site: JsonBody, what: string, work: () => Promise<T>): Promise<T> {
  let going = true;
  const seen: Record<string, number> = {};
  const bad: string[] = [];
  const asking = (async () => {
    while (going) {
      const answer = await curlSite(site.domain, '/hello');
      const port = / port=(\d+) /.exec(answer.body)?.[1] ?? '?';
      const key = `${answer.status} port ${port}`;
      seen[key] = (seen[key] ?? 0) + 1;
      if (answer.status !== 200 || !/^generic-port v[12] /.test(answer.body)) bad.push(`${answer.status} ${answer.body.trim()}`);
    }
  })();
  const result = await work().finally(() => {
    going = false;
  });
  await asking;
  figures[`generic-port answers during the ${what} (status and port: count)`] = seen;
  expect(bad, `answers other than a 200 of v1 or v2 during the ${what}: ${JSON.stringify(seen)}`).toEqual([]);
  return result;
}

async function rollback(site: JsonBody): Promise<JsonBody> {
  const started = Date.now();
  const rb = await finished((await must(202, api('POST', `/api/v1/sites/${site.uuid}/rollback`, {}), 'POST rollback')).uuid);
  figures[`${site.type} rollback ms`] = Date.now() - started;
  return rb;
}

const logOf = async (d: JsonBody) => (await h.operation(d.operation.uuid)).logs.map((l) => l.line).join('\n');

const fixture = (name: string) => fixtureFiles(join(FIXTURES, name));

async function commit(name: string, files: Record<string, string>, message: string): Promise<string> {
  return commitAndPush(`${WORK}/${name}`, `${GIT_BASE}/acme/${name}.git`, files, message);
}

const page = (site: JsonBody, accept: (body: string) => boolean, timeoutMs = 30_000) =>
  curlUntil(site.domain, '/', (a) => a.status === 200 && accept(a.body), timeoutMs);

/** The users running `pattern` on the host (ps), one per process. */
async function usersRunning(pattern: string): Promise<string[]> {
  const ps = await run('ps', ['-eo', 'user:32=,args=']);
  return ps.stdout
    .split('\n')
    .filter((line) => line.includes(pattern) && !line.includes('ps -eo'))
    .map((line) => line.trim().split(/\s+/)[0] ?? '');
}

describe.skipIf(!process.env.SITEPLANE_SYSTEM_TESTS)(
  'Generic Port and Adonis deployed from real repositories (the service on SQLite; issue 11 item 7)',
  () => {
    let generic: JsonBody;
    let adonis: JsonBody;
    let port: number;
    let genericV1: JsonBody;
    let adonisV1: JsonBody;

    beforeAll(async () => {
      await serveRepositories(GIT_BASE, WORK, ['generic', 'adonis'], GIT_PORT);
      h = await Harness.start({ username: user });
      await h.registerServer();
      token = (await createToken(h.service.storage.db, { name: `port-${id}`, scope: 'write' })).token;
      port = await freePort();
    }, 900_000);

    afterAll(async () => {
      console.log(`generic port and adonis figures: ${JSON.stringify(figures, null, 2)}`);
      await stopServingRepositories(GIT_BASE, WORK);
      await h?.stop();
      await removeSystemUser(user, id).catch(() => undefined);
      await stopTestHost(HOST);
    }, 600_000);

    it('creates a Generic Port and an Adonis site and binds them to a git profile; Generic Port asks for its start command', async () => {
      const [g, a] = await Promise.all([
        h.createSite('generic-port', domain('port'), { port }),
        h.createSite('adonis', domain('adonis')),
      ]);
      [generic, adonis] = await Promise.all([h.waitInstalled(g, 900_000), h.waitInstalled(a, 900_000)]);
      await commit('generic', fixture('generic-port-app'), 'generic v1');
      await commit('adonis', fixture('adonis-app'), 'adonis v1');
      await bindToHostRepositories(`port-${id}`, { address: host.address, port: GIT_PORT }, [
        [generic, 'generic'],
        [adonis, 'adonis'],
      ]);

      // No start command: refused before anything is queued, naming the setting.
      const refused = await api('POST', `/api/v1/sites/${generic.uuid}/deployments`, {});
      expect(refused.status).toBe(422);
      expect(refused.body.errors.map((e: JsonBody) => `${e.field}:${e.code}`)).toEqual(['startCommand:required']);
      const settings = await must(
        200,
        api('PATCH', `/api/v1/sites/${generic.uuid}/deploy-settings`, {
          startCommand: START,
          // The build runs before the start command, in the release (the server reads what it wrote).
          buildCommand: 'echo "built-$(cat VERSION)" > built.txt',
        }),
        'PATCH generic deploy-settings',
      );
      expect(settings).toMatchObject({ start_command: START, hooks: [] });
      await must(
        200,
        api('PATCH', `/api/v1/sites/${generic.uuid}/environment`, {
          set: {
            GREETING: { value: 'port-env-1', scope: 'runtime' },
            SITE_LABEL: { value: 'quoted one', scope: 'runtime' },
          },
        }),
        'PATCH generic environment',
      );
      await must(
        200,
        api('PATCH', `/api/v1/sites/${adonis.uuid}/environment`, {
          set: {
            APP_KEY: { value: 'siteplane-adonis-test-key-32-chars!', scope: 'runtime' },
            GREETING: { value: 'adonis-env-1', scope: 'runtime' },
          },
        }),
        'PATCH adonis environment',
      );
    }, 1_800_000);

    it('Generic Port v1: the deploy ensures Node and PM2 and runs the start command as the site user on the site port, behind nginx', async () => {
      genericV1 = await deploy(generic);
      const log = await logOf(genericV1);
      expect(log).toMatch(/health check: .* answered \/ with 200 beside the live release/);
      expect(log).toMatch(/started PM2 process .* in place/);
      const expected = (version: string, greeting: string) =>
        `generic-port ${version} ${greeting} built-${version} label=quoted one two user=${user} port=${port} path=/hello`;
      const answer = await curlUntil(generic.domain, '/hello', (a) => a.status === 200, 30_000);
      expect(answer.body.trim()).toBe(expected('v1', 'port-env-1'));
      // On the site's port itself, on the loopback; run by the site user, never by root.
      const direct = await mustRun('curl', ['-sS', '--max-time', '10', `http://127.0.0.1:${port}/hello`]);
      expect(direct.stdout.trim()).toBe(expected('v1', 'port-env-1'));
      expect(await usersRunning('node server.mjs')).toEqual([user]);
      expect((await pm2List(user)).get(generic.domain)).toBe('online');
      // Saved for boot: the dump names the site's process.
      expect((await mustRun('cat', ['--', `/home/${user}/.pm2/dump.pm2`])).stdout).toContain(generic.domain);

      // A start command that never answers: the health gate beside the live release stops it there.
      await must(
        200,
        api('PATCH', `/api/v1/sites/${generic.uuid}/deploy-settings`, {
          startCommand: 'echo "not listening" && sleep 600',
          healthCheck: { path: '/', timeoutSeconds: 5 },
        }),
        'PATCH a broken start command',
      );
      const broken = await deploy(generic, 'failed');
      expect(await logOf(broken)).toMatch(/health check failed: .* beside the live release .* which keeps serving/);
      expect((await curlSite(generic.domain, '/hello')).body.trim()).toBe(expected('v1', 'port-env-1'));
      expect(await usersRunning('sleep 600')).toEqual([]);
      await must(
        200,
        api('PATCH', `/api/v1/sites/${generic.uuid}/deploy-settings`, { startCommand: START, reset: ['healthCheck'] }),
        'PATCH the start command back',
      );

      // v2: new code and a new variable; then a rollback to v1, its own launcher and variables.
      await commit('generic', { VERSION: 'v2\n' }, 'generic v2');
      await must(
        200,
        api('PATCH', `/api/v1/sites/${generic.uuid}/environment`, {
          set: { GREETING: { value: 'port-env-2', scope: 'runtime' } },
        }),
        'PATCH generic environment',
      );
      // Requests through nginx while it deploys and while it rolls back: PM2 restarts the process
      // in place, and its stand-in (the same release on a port of its own) answers meanwhile.
      const v2 = await whileAsking(generic, 'v2 deploy', () => deploy(generic));
      expect((await curlUntil(generic.domain, '/hello', (a) => a.body.includes(' v2 '), 30_000)).body.trim()).toBe(
        expected('v2', 'port-env-2'),
      );
      expect(await logOf(v2)).toMatch(/answered \/ with 200 beside the live release \(port \d+\), kept as its stand-in/);
      const rb = await whileAsking(generic, 'rollback', () => rollback(generic));
      expect(rb).toMatchObject({ trigger: 'rollback', release: genericV1.release, rollback: { from_release: v2.release } });
      expect((await curlUntil(generic.domain, '/hello', (a) => a.body.includes(' v1 '), 30_000)).body.trim()).toBe(
        expected('v1', 'port-env-1'),
      );
      // Nothing of the stand-ins stays: no process, no pid file, no backup in the vhost.
      expect((await run('pgrep', ['-u', user, '-f', '^timeout -k 10 '])).stdout.trim()).toBe('');
      expect(pathKind(`/home/${user}/${generic.domain}/.siteplane-stand-in.pid`)).toBe(null);
      expect((await mustRun('cat', ['--', `/etc/nginx/sites-available/${generic.domain}.conf`])).stdout).not.toContain(
        'upstream',
      );
      expect(await usersRunning('node server.mjs')).toEqual([user]);
    }, 1_800_000);

    it('Adonis 6 v1: npm ci from the registry with the lock, node ace build, build/bin/server.js under PM2 with APP_KEY', async () => {
      adonisV1 = await deploy(adonis);
      const log = await logOf(adonisV1);
      expect(log).toMatch(/added \d+ packages/);
      expect(log).toContain('compiling typescript source (tsc)');
      expect(log).not.toContain('siteplane-adonis-test-key');
      const release = `/home/${user}/${adonis.domain}/releases/${adonisV1.release}`;
      expect(pathKind(`${release}/build/bin/server.js`)).toBe('file');
      const answer = await page(adonis, (b) => b.includes('adonis v1'));
      expect(answer.body).toBe('adonis v1 adonis-env-1 web production sealed with APP_KEY');
    }, 1_800_000);

    it('Adonis v2 and a rollback to v1', async () => {
      await commit('adonis', { 'start/version.ts': "export const VERSION = 'v2'\n" }, 'adonis v2');
      const v2 = await deploy(adonis);
      expect((await page(adonis, (b) => b.includes('adonis v2'))).body).toBe(
        'adonis v2 adonis-env-1 web production sealed with APP_KEY',
      );
      const rb = await rollback(adonis);
      expect(rb).toMatchObject({ release: adonisV1.release, rollback: { from_release: v2.release } });
      expect((await page(adonis, (b) => b.includes('adonis v1'))).body).toBe(
        'adonis v1 adonis-env-1 web production sealed with APP_KEY',
      );
    }, 1_800_000);

    it('deletes both sites: the processes go with them', async () => {
      for (const site of [generic, adonis]) {
        const del = await h.deleteSite(site.uuid);
        await h.waitGone(site, del.operation.uuid, 300_000);
        expect((await run('ls', ['-A', '--', `/home/${user}/${site.domain}`])).code).not.toBe(0);
      }
      expect(await usersRunning('node server.mjs')).toEqual([]);
      expect((await run('pgrep', ['-u', user, '-f', 'build/bin/server.js'])).stdout.trim()).toBe('');
    }, 900_000);
  },
);
