import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOTENV_BEGIN } from '../../../src/provisioning/deploy/laravel-dotenv.js';
import { createToken } from '../../../src/storage/tokens.js';
import { deployApi, fixtureFiles } from '../sites/support/deploy-api.js';
import { serveRepositories, stopServingRepositories } from '../sites/support/git-daemon.js';
import { commitAndPush } from '../sites/support/git-work-tree.js';
import { Harness, type JsonBody, removeSystemUser, runId } from '../sites/support/harness.js';
import { curlSite, curlUntil, mustRun, pathKind, run, useHost } from '../sites/support/host.js';
import { startTestHost, stopTestHost } from '../support/test-host.js';

/**
 * Issue 11 item 7: the per-type defaults with real apps from a real repository, through the API,
 * on the pristine test host. The apps are committed under fixtures/ and pushed to bare repositories
 * on the host, served by `git daemon` (as deploy-end-to-end does):
 * - Laravel: its one Composer dependency comes from a path repository in the app (packagist is not
 *   reachable), with its composer.lock; `artisan` does what Laravel's does to the files for the
 *   commands the default hooks run. Composer is installed by Siteplane's own deploy step. v1 with the
 *   defaults, v2 with the migrations hook turned on and a changed variable, rollback to v1.
 * - Next SSR 14 (pages router, a page rendered per request): `npm ci` from the npm registry with the
 *   committed lock, `next build`, run by PM2. (Nuxt is not deployed here: one framework's install and
 *   build already take minutes on a loaded CI machine; Nuxt uses the same steps with its own entry.)
 */
// A pristine host of its own (test-host.sh index 10), so this suite runs beside the other fresh
// suites (run-tests.mjs) instead of after them on the shared host.
const HOST = 'realapps';
const host = await startTestHost(HOST, { index: 10 });
useHost(host);
const id = runId();
const user = `spr${id}`;
const GIT_BASE = `/srv/siteplane-apps-git-${id}`;
const WORK = `/srv/siteplane-apps-work-${id}`;
// Not deploy-end-to-end's 9418: both may run at once on the shared host.
const GIT_PORT = 9420;
const FIXTURES = join(import.meta.dirname, '../sites/fixtures');
const domain = (label: string) => `${label}-${id}.siteplane.test`;
const figures: Record<string, unknown> = {};

let h: Harness;
let token: string;

const { api, must, finished, bindToHostRepositories } = deployApi(
  () => h,
  () => token,
);
const succeeded = (uuid: string) => finished(uuid);

async function deploy(site: JsonBody): Promise<JsonBody> {
  const started = Date.now();
  const d = await succeeded(
    (await must(202, api('POST', `/api/v1/sites/${site.uuid}/deployments`, {}), 'POST deployments')).uuid,
  );
  figures[`${site.type} deploy ${d.release} ms`] = Date.now() - started;
  return d;
}

const fixture = (name: string) => fixtureFiles(join(FIXTURES, name));

/** Writes files into the work tree `name` on the host, commits and pushes main; returns the sha. */
async function commit(name: string, files: Record<string, string>, message: string): Promise<string> {
  return commitAndPush(`${WORK}/${name}`, `${GIT_BASE}/acme/${name}.git`, files, message);
}

const page = (site: JsonBody, accept: (body: string) => boolean, timeoutMs = 15_000) =>
  curlUntil(site.domain, '/', (a) => a.status === 200 && accept(a.body), timeoutMs);

const laravelPage = (version: string, greeting: string) => `laravel ${version} ${greeting} (greeter says hello to siteplane)`;

describe.skipIf(!process.env.SITEPLANE_SYSTEM_TESTS)(
  "real apps deployed with their type's defaults (the service on SQLite; issue 11 item 7)",
  () => {
    let laravel: JsonBody;
    let next: JsonBody;
    let composerBefore: boolean;
    let laravelV1: JsonBody;

    beforeAll(async () => {
      await serveRepositories(GIT_BASE, WORK, ['laravel', 'next'], GIT_PORT);
      composerBefore = (await run('sh', ['-c', 'command -v composer'])).code === 0;
      h = await Harness.start({ username: user });
      await h.registerServer();
      token = (await createToken(h.service.storage.db, { name: `apps-${id}`, scope: 'write' })).token;
    }, 900_000);

    afterAll(async () => {
      console.log(`real apps figures: ${JSON.stringify(figures, null, 2)}`);
      await stopServingRepositories(GIT_BASE, WORK);
      await h?.stop();
      await removeSystemUser(user, id).catch(() => undefined);
      await stopTestHost(HOST);
    }, 600_000);

    it('creates a Laravel and a Next SSR site, binds them to a git profile and sets their variables', async () => {
      const [l, n] = await Promise.all([h.createSite('laravel', domain('laravel')), h.createSite('next-ssr', domain('next'))]);
      [laravel, next] = await Promise.all([h.waitInstalled(l, 900_000), h.waitInstalled(n, 900_000)]);
      await commit('laravel', fixture('laravel-app'), 'laravel v1');
      await commit('next', { ...fixture('next-app'), 'release.json': '{"marker":"v1"}\n' }, 'next v1');

      await bindToHostRepositories(`apps-${id}`, { address: host.address, port: GIT_PORT }, [
        [laravel, 'laravel'],
        [next, 'next'],
      ]);
      await must(
        200,
        api('PATCH', `/api/v1/sites/${laravel.uuid}/environment`, {
          set: {
            APP_KEY: { value: 'base64:c2l0ZXBsYW5lLXRlc3Qta2V5LTMyLWJ5dGVzLWxvbmc=', scope: 'runtime' },
            GREETING: { value: 'laravel-env-1', scope: 'runtime' },
          },
        }),
        'PATCH laravel environment',
      );
      await must(
        200,
        api('PATCH', `/api/v1/sites/${next.uuid}/environment`, {
          set: {
            GREETING: { value: 'next-env-1', scope: 'runtime' },
            // Next's build would report to its telemetry service otherwise.
            NEXT_TELEMETRY_DISABLED: { value: '1', scope: 'build' },
          },
        }),
        'PATCH next environment',
      );
    }, 1_800_000);

    it("Laravel v1 with the type's defaults: Composer from the lock, shared .env and storage, caches; migrations off", async () => {
      const settings = await must(200, api('GET', `/api/v1/sites/${laravel.uuid}/deploy-settings`), 'GET deploy-settings');
      expect(settings.hooks.map((hook: JsonBody) => `${hook.name} ${hook.enabled}`)).toEqual([
        'composer install true',
        'migrations false',
        'caches true',
      ]);
      expect(settings.shared_paths).toEqual([
        { path: '.env', kind: 'file' },
        { path: 'storage', kind: 'directory' },
      ]);

      laravelV1 = await deploy(laravel);
      const log = (await h.operation(laravelV1.operation.uuid)).logs.map((l) => l.line).join('\n');
      // Composer came from Siteplane's own step (the test host had none unless another suite's PHP deploy put it there).
      if (!composerBefore) expect(log).toMatch(/installed .*\bcomposer\b/);
      expect((await run('sh', ['-c', 'command -v composer'])).code).toBe(0);
      expect(log).toMatch(/Installing acme\/greeter \(1\.0\.0\)/);
      expect(log).toContain('Configuration cached successfully.');
      // Hooks run the site's PHP (8.2 here), first on PATH through Siteplane's root-owned shims.
      expect(log).toContain('hooks run php and composer on PHP 8.2');
      expect(log).toContain('PHP 8.2, PATH starts with /usr/local/lib/siteplane/php8.2/bin');
      expect((await mustRun('stat', ['-c', '%U %a', '--', '/usr/local/lib/siteplane/php8.2/bin/composer'])).stdout.trim()).toBe(
        'root 755',
      );
      expect(log).not.toContain('laravel-env-1');
      // Asked through its PHP-FPM pool before the switch, the script in the new release (check-before-switch.ts).
      expect(log).toMatch(
        new RegExp(`health check: / answered [23]\\d\\d in ${laravelV1.release} before the switch \\(PHP-FPM\\)`),
      );

      const root = `/home/${user}/${laravel.domain}`;
      const release = `${root}/releases/${laravelV1.release}`;
      expect(pathKind(`${release}/vendor/autoload.php`)).toBe('file');
      expect(pathKind(`${release}/vendor/acme/greeter/src/Greeter.php`)).toBe('file');
      expect(pathKind(`${release}/bootstrap/cache/config.php`)).toBe('file');
      for (const shared of ['.env', 'storage']) {
        expect(pathKind(`${release}/${shared}`)).toBe('symlink');
        expect((await mustRun('readlink', ['--', `${release}/${shared}`])).stdout.trim()).toBe(`${root}/shared/${shared}`);
      }
      const dotenv = await mustRun('stat', ['-c', '%a %U', '--', `${root}/shared/.env`]);
      expect(dotenv.stdout.trim()).toBe(`600 ${user}`);
      expect((await mustRun('cat', ['--', `${root}/shared/.env`])).stdout).toContain(`${DOTENV_BEGIN}\n`);
      expect(pathKind(`${root}/shared/storage/app/migrations.json`)).toBeNull();

      expect((await page(laravel, (b) => b.includes('laravel v1'))).body.trim()).toBe(laravelPage('v1', 'laravel-env-1'));
      // The app writes into the shared storage through its release's link.
      expect((await mustRun('cat', ['--', `${root}/shared/storage/logs/visits.log`])).stdout).toContain('v1');
    }, 1_800_000);

    it('Laravel v2 with the migrations hook on and a changed variable; rollback returns v1 with its own configuration', async () => {
      const settings = await must(200, api('GET', `/api/v1/sites/${laravel.uuid}/deploy-settings`), 'GET deploy-settings');
      const hooks = settings.hooks.map((hook: JsonBody) => (hook.name === 'migrations' ? { ...hook, enabled: true } : hook));
      await must(200, api('PATCH', `/api/v1/sites/${laravel.uuid}/deploy-settings`, { hooks }), 'PATCH deploy-settings');
      await must(
        200,
        api('PATCH', `/api/v1/sites/${laravel.uuid}/environment`, {
          set: { GREETING: { value: 'laravel-env-2', scope: 'runtime' } },
        }),
        'PATCH environment',
      );
      await commit('laravel', { VERSION: 'v2\n' }, 'laravel v2');
      const v2 = await deploy(laravel);
      const log = (await h.operation(v2.operation.uuid)).logs.map((l) => l.line).join('\n');
      expect(log).toContain('Migrated: 0001_create_visits');
      expect((await page(laravel, (b) => b.includes('laravel v2'))).body.trim()).toBe(laravelPage('v2', 'laravel-env-2'));
      const root = `/home/${user}/${laravel.domain}`;
      expect((await mustRun('cat', ['--', `${root}/shared/storage/app/migrations.json`])).stdout.trim()).toBe(
        '["0001_create_visits"]',
      );

      const started = Date.now();
      const rb = await succeeded(
        (await must(202, api('POST', `/api/v1/sites/${laravel.uuid}/rollback`, {}), 'POST rollback')).uuid,
      );
      figures['laravel rollback ms'] = Date.now() - started;
      expect(rb).toMatchObject({
        trigger: 'rollback',
        release: laravelV1.release,
        rollback: { from_release: v2.release, environment_changed: true, migrations_changed: true },
      });
      // v1's cached configuration: the variable it was deployed with, although shared/.env now holds the newer one.
      expect((await page(laravel, (b) => b.includes('laravel v1'))).body.trim()).toBe(laravelPage('v1', 'laravel-env-1'));
    }, 1_800_000);

    it('Next SSR: npm ci from the registry with the committed lock, next build, run by PM2 behind nginx', async () => {
      const d = await deploy(next);
      const log = (await h.operation(d.operation.uuid)).logs.map((l) => l.line).join('\n');
      expect(log).toMatch(/added \d+ packages/);
      expect(log).toContain('Next.js 14.2.35');
      const answer = await page(next, (b) => b.includes('next-ssr v1'), 30_000);
      expect(answer.body).toContain('next-ssr v1 next-env-1');
      expect(answer.headers).toMatch(/^x-powered-by: Next\.js/im);
      const release = `/home/${user}/${next.domain}/releases/${d.release}`;
      expect(pathKind(`${release}/.next/BUILD_ID`)).toBe('file');
      // PM2 (as the site user) runs the release through `current`.
      const pm2 = await mustRun('ps', ['-u', user, '-o', 'args=']);
      expect(pm2.stdout).toMatch(/PM2 v[\d.]+: God Daemon/);
      expect((await curlSite(next.domain, '/')).body).toContain('next-ssr v1 next-env-1');
    }, 1_800_000);

    it('deletes both sites: releases and processes go with them', async () => {
      for (const site of [laravel, next]) {
        const del = await h.deleteSite(site.uuid);
        await h.waitGone(site, del.operation.uuid, 300_000);
        expect((await run('ls', ['-A', '--', `/home/${user}/${site.domain}`])).code).not.toBe(0);
      }
      expect((await run('pgrep', ['-u', user, '-f', 'next'])).stdout.trim()).toBe('');
    }, 900_000);
  },
);
