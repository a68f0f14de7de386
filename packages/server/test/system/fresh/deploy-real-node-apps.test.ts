import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../../src/storage/tokens.js';
import { deployApi, fixtureFiles } from '../sites/support/deploy-api.js';
import { serveRepositories, stopServingRepositories } from '../sites/support/git-daemon.js';
import { commitAndPush } from '../sites/support/git-work-tree.js';
import { Harness, type JsonBody, removeSystemUser, runId } from '../sites/support/harness.js';
import { curlSite, curlUntil, type HttpAnswer, mustRun, pathKind, run, useHost } from '../sites/support/host.js';
import { startTestHost, stopTestHost } from '../support/test-host.js';

/**
 * Issue 11 item 7, the Node types with real apps from a real repository, through the API, on the
 * pristine test host: each app is committed under fixtures/ with the package-lock.json npm made for
 * it, pushed to a bare repository on the host served by `git daemon`, installed there by `npm ci`
 * from the npm registry and built by its framework:
 * - Nuxt SSR (Nuxt 3, fixtures/nuxt-app): `nuxt build`, `.output/server/index.mjs` run by PM2; the
 *   page renders the visitor from the query string and NUXT_PUBLIC_GREETING read at run time.
 * - Nuxt Static (the same app in a repository of its own): `nuxt generate`, nginx serves `.output/public`.
 * - NodeJS SSR without artifactPath (fixtures/express-app): Express, nothing to build, run from the release.
 * - NodeJS SSR with artifactPath `dist` (fixtures/express-ts-app): TypeScript compiled by `tsc`, run from dist/.
 * - NodeJS Static with artifactPath `dist` (fixtures/vite-app): `vite build`, nginx serves dist/.
 * - Nuxt 2 SSR and Static (fixtures/nuxt2-app, webpack 4): `nuxt build` then `nuxt start` on the
 *   loopback run by PM2 (the variable read when it loads its config); `nuxt generate`, nginx serves dist/.
 * Each: v1 deployed and answering through nginx, v2 (a changed file, for the SSR apps a changed
 * run-time variable) deployed, rollback to v1. All sites belong to one system user, so every
 * `npm ci` after the first shares its npm cache (~/.npm).
 */
// A pristine host of its own (test-host.sh index 11), so this suite runs beside the other fresh
// suites (run-tests.mjs) instead of after them on the shared host.
const HOST = 'nodeapps';
const host = await startTestHost(HOST, { index: 11 });
useHost(host);
const id = runId();
const user = `spn${id}`;
const GIT_BASE = `/srv/siteplane-node-apps-git-${id}`;
const WORK = `/srv/siteplane-node-apps-work-${id}`;
// Not the other deploy suites' ports (9418, 9420): they may run at once on the shared host.
const GIT_PORT = 9427;
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

/** Deploys the branch's head; returns the deployment and its log. */
async function deploy(site: JsonBody, label: string): Promise<{ d: JsonBody; log: string }> {
  const started = Date.now();
  const d = await succeeded(
    (await must(202, api('POST', `/api/v1/sites/${site.uuid}/deployments`, {}), 'POST deployments')).uuid,
  );
  figures[`${label} ms`] = Date.now() - started;
  const op = await h.operation(d.operation.uuid);
  // Where the time went: each step's start to the next one's (npm ci, the build, activation …).
  const starts = op.steps.map((step) => Date.parse(step.started_at));
  figures[`${label} steps s`] = Object.fromEntries(
    op.steps.slice(0, -1).map((step, i) => [step.name, ((starts[i + 1] as number) - (starts[i] as number)) / 1000]),
  );
  return { d, log: op.logs.map((l) => l.line).join('\n') };
}

async function rollback(site: JsonBody, label: string): Promise<JsonBody> {
  const started = Date.now();
  const rb = await succeeded((await must(202, api('POST', `/api/v1/sites/${site.uuid}/rollback`, {}), 'POST rollback')).uuid);
  figures[`${label} ms`] = Date.now() - started;
  return rb;
}

const fixture = (name: string) => fixtureFiles(join(FIXTURES, name));

const commit = (repo: string, files: Record<string, string>, message: string) =>
  commitAndPush(`${WORK}/${repo}`, `${GIT_BASE}/acme/${repo}.git`, files, message);

async function setEnvironment(site: JsonBody, set: Record<string, { value: string; scope: 'build' | 'runtime' }>) {
  await must(200, api('PATCH', `/api/v1/sites/${site.uuid}/environment`, { set }), `PATCH ${site.type} environment`);
}

/** The first answer through nginx with status 200 whose body contains `text` (the last one tried otherwise). */
const answerWith = (site: JsonBody, path: string, text: string, timeoutMs = 30_000) =>
  curlUntil(site.domain, path, (a) => a.status === 200 && a.body.includes(text), timeoutMs);

/** The local addresses (as /proc/net/tcp writes them) of the sockets listening on a port of the host. */
async function listeningAddresses(port: number): Promise<string[]> {
  const sockets = (await run('cat', ['/proc/net/tcp', '/proc/net/tcp6'])).stdout;
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  return [...sockets.matchAll(/^\s*\d+: ([0-9A-F]+):([0-9A-F]{4}) [0-9A-F]+:[0-9A-F]{4} 0A /gm)]
    .filter((m) => m[2] === hex)
    .map((m) => m[1] as string);
}

/** Nuxt's server-rendered paragraph (Vue leaves no markup inside it). */
const nuxtLine = (answer: HttpAnswer) => /<p id="page">([^<]*)<\/p>/.exec(answer.body)?.[1] ?? answer.body;

const REPOS = ['nuxt-ssr', 'nuxt-static', 'express', 'express-ts', 'vite', 'nuxt2-ssr', 'nuxt2-static'] as const;

describe.skipIf(!process.env.SITEPLANE_SYSTEM_TESTS)(
  'real Node apps deployed with their type defaults: Nuxt 3 and 2 SSR and Static, NodeJS SSR with and without artifactPath, NodeJS Static (issue 11 item 7)',
  () => {
    const sites: Record<(typeof REPOS)[number], JsonBody> = {} as never;
    const started = Date.now();

    beforeAll(async () => {
      await serveRepositories(GIT_BASE, WORK, REPOS, GIT_PORT);
      h = await Harness.start({ username: user });
      await h.registerServer();
      token = (await createToken(h.service.storage.db, { name: `node-apps-${id}`, scope: 'write' })).token;
    }, 900_000);

    afterAll(async () => {
      figures['whole suite ms'] = Date.now() - started;
      console.log(`real Node apps figures: ${JSON.stringify(figures, null, 2)}`);
      await stopServingRepositories(GIT_BASE, WORK);
      await h?.stop();
      await removeSystemUser(user, id).catch(() => undefined);
      await stopTestHost(HOST);
    }, 600_000);

    it('creates the seven sites, pushes v1 of each app and binds each site to its repository', async () => {
      const created = await Promise.all([
        h.createSite('nuxt-ssr', domain('nuxt'), { site_type_version: 3 }),
        h.createSite('nuxt-static', domain('nuxtstatic'), { site_type_version: 3 }),
        h.createSite('nodejs-ssr', domain('express')),
        h.createSite('nodejs-ssr', domain('expressts'), { artifactPath: 'dist' }),
        h.createSite('nodejs-static', domain('vite'), { artifactPath: 'dist' }),
        h.createSite('nuxt-ssr', domain('nuxt2'), { site_type_version: 2 }),
        h.createSite('nuxt-static', domain('nuxt2static'), { site_type_version: 2 }),
      ]);
      const installed = await Promise.all(created.map((s) => h.waitInstalled(s, 900_000)));
      REPOS.forEach((repo, i) => {
        sites[repo] = installed[i] as JsonBody;
      });
      await commit('nuxt-ssr', fixture('nuxt-app'), 'nuxt v1');
      await commit('nuxt-static', fixture('nuxt-app'), 'nuxt v1');
      await commit('express', fixture('express-app'), 'express v1');
      await commit('express-ts', fixture('express-ts-app'), 'express-ts v1');
      await commit('vite', fixture('vite-app'), 'vite v1');
      await commit('nuxt2-ssr', fixture('nuxt2-app'), 'nuxt2 v1');
      await commit('nuxt2-static', fixture('nuxt2-app'), 'nuxt2 v1');

      await bindToHostRepositories(
        `node-apps-${id}`,
        { address: host.address, port: GIT_PORT },
        REPOS.map((repo) => [sites[repo] as JsonBody, repo] as const),
      );
      await setEnvironment(sites['nuxt-ssr'], {
        NUXT_PUBLIC_GREETING: { value: 'nuxt-env-1', scope: 'runtime' },
        NUXT_TELEMETRY_DISABLED: { value: '1', scope: 'build' },
      });
      await setEnvironment(sites['nuxt-static'], {
        NUXT_PUBLIC_GREETING: { value: 'static-env-1', scope: 'build' },
        NUXT_TELEMETRY_DISABLED: { value: '1', scope: 'build' },
      });
      await setEnvironment(sites.express, { GREETING: { value: 'express-env-1', scope: 'runtime' } });
      await setEnvironment(sites['express-ts'], { GREETING: { value: 'ts-env-1', scope: 'runtime' } });
      await setEnvironment(sites.vite, { VITE_GREETING: { value: 'vite-env-1', scope: 'build' } });
      await setEnvironment(sites['nuxt2-ssr'], { NUXT_PUBLIC_GREETING: { value: 'nuxt2-env-1', scope: 'runtime' } });
      await setEnvironment(sites['nuxt2-static'], { NUXT_PUBLIC_GREETING: { value: 'static2-env-1', scope: 'build' } });
    }, 1_800_000);

    it('Nuxt SSR: npm ci, nuxt build, .output/server/index.mjs run by PM2; v2 with a new run-time variable; rollback', async () => {
      const site = sites['nuxt-ssr'];
      const settings = await must(200, api('GET', `/api/v1/sites/${site.uuid}/deploy-settings`), 'GET deploy-settings');
      expect(settings).toMatchObject({ build_command: 'npm run build', artifact_path: null });

      const v1 = await deploy(site, 'nuxt-ssr v1');
      expect(v1.log).toMatch(/added \d+ packages/);
      expect(v1.log).toContain('Build complete');
      const release = `/home/${user}/${site.domain}/releases/${v1.d.release}`;
      expect(pathKind(`${release}/.output/server/index.mjs`)).toBe('file');
      // Rendered per request, with the variable read at run time.
      const first = await answerWith(site, '/?visitor=ada', 'visitor=ada');
      expect(nuxtLine(first)).toBe('nuxt v1 greeting=nuxt-env-1 visitor=ada');
      expect(first.headers).toMatch(/^x-powered-by: Nuxt/im);
      expect(nuxtLine(await curlSite(site.domain, '/?visitor=bob'))).toBe('nuxt v1 greeting=nuxt-env-1 visitor=bob');
      const pm2 = await mustRun('ps', ['-u', user, '-o', 'args=']);
      expect(pm2.stdout).toMatch(/PM2 v[\d.]+: God Daemon/);

      await setEnvironment(site, { NUXT_PUBLIC_GREETING: { value: 'nuxt-env-2', scope: 'runtime' } });
      await commit('nuxt-ssr', { 'release.json': '{"marker":"v2"}\n' }, 'nuxt v2');
      const v2 = await deploy(site, 'nuxt-ssr v2 (lock unchanged)');
      // Same lock and build variables (only a run-time one changed): v1's node_modules copied, no npm ci.
      expect(v2.log).toContain(`node_modules copied from ${v1.d.release}`);
      expect(v2.log).not.toMatch(/added \d+ packages/);
      expect(nuxtLine(await answerWith(site, '/?visitor=ada', 'nuxt v2'))).toBe('nuxt v2 greeting=nuxt-env-2 visitor=ada');

      const rb = await rollback(site, 'nuxt-ssr rollback');
      expect(rb).toMatchObject({ trigger: 'rollback', release: v1.d.release, rollback: { from_release: v2.d.release } });
      expect(nuxtLine(await answerWith(site, '/?visitor=cy', 'nuxt v1'))).toBe('nuxt v1 greeting=nuxt-env-1 visitor=cy');
    }, 2_700_000);

    it('Nuxt Static: nuxt generate, nginx serves .output/public (every page generated); v2; rollback', async () => {
      const site = sites['nuxt-static'];
      const settings = await must(200, api('GET', `/api/v1/sites/${site.uuid}/deploy-settings`), 'GET deploy-settings');
      expect(settings).toMatchObject({ build_command: 'npm run generate' });

      const v1 = await deploy(site, 'nuxt-static v1');
      expect(v1.log).toMatch(/added \d+ packages/);
      const release = `/home/${user}/${site.domain}/releases/${v1.d.release}`;
      expect(pathKind(`${release}/.output/public/index.html`)).toBe('file');
      expect(pathKind(`${release}/.output/public/about/index.html`)).toBe('file');
      expect(v1.log).toContain('.output/public/ is there: nginx serves it');
      // Rendered once at generate time: the build-time variable, and no visitor from the request.
      const first = await answerWith(site, '/?visitor=ada', 'nuxt v1');
      expect(nuxtLine(first)).toBe('nuxt v1 greeting=static-env-1 visitor=nobody');
      expect(first.headers).not.toMatch(/^x-powered-by/im);
      expect((await answerWith(site, '/about/', 'about this nuxt app')).status).toBe(200);
      // Nothing runs for a static site: no process of this domain under PM2.
      expect((await run('pgrep', ['-u', user, '-f', site.domain])).stdout.trim()).toBe('');

      await commit('nuxt-static', { 'release.json': '{"marker":"v2"}\n' }, 'nuxt v2');
      const v2 = await deploy(site, 'nuxt-static v2 (lock unchanged)');
      expect(nuxtLine(await answerWith(site, '/', 'nuxt v2'))).toBe('nuxt v2 greeting=static-env-1 visitor=nobody');

      const rb = await rollback(site, 'nuxt-static rollback');
      expect(rb).toMatchObject({ release: v1.d.release, rollback: { from_release: v2.d.release } });
      expect(nuxtLine(await answerWith(site, '/', 'nuxt v1'))).toBe('nuxt v1 greeting=static-env-1 visitor=nobody');
    }, 2_700_000);

    it('NodeJS SSR without artifactPath: an Express app run from the release root (package.json main); v2; rollback', async () => {
      const site = sites.express;
      const v1 = await deploy(site, 'express v1');
      expect(v1.log).toMatch(/added \d+ packages/);
      expect((await answerWith(site, '/?visitor=ada', 'visitor=ada')).body).toBe(
        'express v1 greeting=express-env-1 visitor=ada\n',
      );
      await setEnvironment(site, { GREETING: { value: 'express-env-2', scope: 'runtime' } });
      await commit('express', { 'release.json': '{"marker":"v2"}\n' }, 'express v2');
      const v2 = await deploy(site, 'express v2');
      expect((await answerWith(site, '/?visitor=bob', 'express v2')).body).toBe(
        'express v2 greeting=express-env-2 visitor=bob\n',
      );
      const rb = await rollback(site, 'express rollback');
      expect(rb).toMatchObject({ release: v1.d.release, rollback: { from_release: v2.d.release } });
      expect((await answerWith(site, '/', 'express v1')).body).toBe('express v1 greeting=express-env-1 visitor=nobody\n');
    }, 1_800_000);

    it('NodeJS SSR with artifactPath dist: TypeScript built by tsc, the app runs from dist/; v2; rollback', async () => {
      const site = sites['express-ts'];
      const settings = await must(200, api('GET', `/api/v1/sites/${site.uuid}/deploy-settings`), 'GET deploy-settings');
      expect(settings).toMatchObject({ artifact_path: 'dist' });
      const v1 = await deploy(site, 'express-ts v1');
      const release = (name: string) => `/home/${user}/${site.domain}/releases/${name}`;
      expect(pathKind(`${release(v1.d.release)}/dist/server.js`)).toBe('file');
      expect((await answerWith(site, '/?visitor=ada', 'visitor=ada')).body).toBe(
        `express-ts v1 greeting=ts-env-1 visitor=ada from=${release(v1.d.release)}/dist\n`,
      );
      await commit('express-ts', { 'src/release.ts': "export const MARKER = 'v2';\n" }, 'express-ts v2');
      const v2 = await deploy(site, 'express-ts v2');
      expect(v2.log).toContain(`node_modules copied from ${v1.d.release}`);
      expect((await answerWith(site, '/', 'express-ts v2')).body).toBe(
        `express-ts v2 greeting=ts-env-1 visitor=nobody from=${release(v2.d.release)}/dist\n`,
      );
      const rb = await rollback(site, 'express-ts rollback');
      expect(rb).toMatchObject({ release: v1.d.release, rollback: { from_release: v2.d.release } });
      expect((await answerWith(site, '/', 'express-ts v1')).body).toBe(
        `express-ts v1 greeting=ts-env-1 visitor=nobody from=${release(v1.d.release)}/dist\n`,
      );
    }, 1_800_000);

    it('NodeJS Static with artifactPath dist: vite build, nginx serves dist/ with its bundled assets; v2; rollback', async () => {
      const site = sites.vite;
      const v1 = await deploy(site, 'vite v1');
      expect(v1.log).toMatch(/built in/);
      expect(v1.log).toContain('dist/ is there: nginx serves it');
      const first = await answerWith(site, '/', 'vite v1');
      expect(first.body).toContain('<p id="page">vite v1 greeting=vite-env-1</p>');
      const asset = /src="(\/assets\/index-[\w-]+\.js)"/.exec(first.body)?.[1];
      expect(asset).toBeDefined();
      const script = await curlSite(site.domain, asset as string);
      expect(script.status).toBe(200);
      expect(script.body).toContain('hydrated');
      // The sources are not what nginx serves: dist/ is.
      expect((await curlSite(site.domain, '/src/main.js')).status).toBe(404);

      await commit('vite', { 'release.json': '{"marker":"v2"}\n' }, 'vite v2');
      const v2 = await deploy(site, 'vite v2');
      expect((await answerWith(site, '/', 'vite v2')).body).toContain('<p id="page">vite v2 greeting=vite-env-1</p>');
      const rb = await rollback(site, 'vite rollback');
      expect(rb).toMatchObject({ release: v1.d.release, rollback: { from_release: v2.d.release } });
      expect((await answerWith(site, '/', 'vite v1')).body).toContain('<p id="page">vite v1 greeting=vite-env-1</p>');
    }, 1_800_000);

    it('Nuxt 2 SSR: npm ci, nuxt build (webpack 4), `nuxt start` on 127.0.0.1 run by PM2; v2; rollback', async () => {
      const site = sites['nuxt2-ssr'];
      const v1 = await deploy(site, 'nuxt2-ssr v1');
      expect(v1.log).toMatch(/added \d+ packages/);
      const release = `/home/${user}/${site.domain}/releases/${v1.d.release}`;
      expect(pathKind(`${release}/.nuxt/dist/server/server.js`)).toBe('file');
      // Rendered per request, with the variable read when `nuxt start` loaded the config.
      const first = await answerWith(site, '/?visitor=ada', 'visitor=ada');
      expect(nuxtLine(first)).toBe('nuxt2 v1 greeting=nuxt2-env-1 visitor=ada');
      // Listening on 127.0.0.1 only (--hostname), where nginx asks: /proc/net/tcp{,6}'s listening sockets on the port.
      expect(await listeningAddresses(site.port as number)).toEqual(['0100007F']);

      await setEnvironment(site, { NUXT_PUBLIC_GREETING: { value: 'nuxt2-env-2', scope: 'runtime' } });
      await commit('nuxt2-ssr', { 'release.json': '{"marker":"v2"}\n' }, 'nuxt2 v2');
      const v2 = await deploy(site, 'nuxt2-ssr v2 (lock unchanged)');
      expect(v2.log).toContain(`node_modules copied from ${v1.d.release}`);
      expect(nuxtLine(await answerWith(site, '/?visitor=bob', 'nuxt2 v2'))).toBe('nuxt2 v2 greeting=nuxt2-env-2 visitor=bob');
      const rb = await rollback(site, 'nuxt2-ssr rollback');
      expect(rb).toMatchObject({ release: v1.d.release, rollback: { from_release: v2.d.release } });
      expect(nuxtLine(await answerWith(site, '/?visitor=cy', 'nuxt2 v1'))).toBe('nuxt2 v1 greeting=nuxt2-env-1 visitor=cy');
    }, 2_700_000);

    it('Nuxt 2 Static: nuxt generate, nginx serves dist/ (every page generated); v2', async () => {
      const site = sites['nuxt2-static'];
      const v1 = await deploy(site, 'nuxt2-static v1');
      const release = `/home/${user}/${site.domain}/releases/${v1.d.release}`;
      expect(pathKind(`${release}/dist/index.html`)).toBe('file');
      expect(v1.log).toContain('dist/ is there: nginx serves it');
      expect(nuxtLine(await answerWith(site, '/?visitor=ada', 'nuxt2 v1'))).toBe(
        'nuxt2 v1 greeting=static2-env-1 visitor=nobody',
      );
      expect((await answerWith(site, '/about/', 'about this nuxt 2 app')).status).toBe(200);
      expect((await run('pgrep', ['-u', user, '-f', site.domain])).stdout.trim()).toBe('');
      await commit('nuxt2-static', { 'release.json': '{"marker":"v2"}\n' }, 'nuxt2 v2');
      await deploy(site, 'nuxt2-static v2 (lock unchanged)');
      expect(nuxtLine(await answerWith(site, '/', 'nuxt2 v2'))).toBe('nuxt2 v2 greeting=static2-env-1 visitor=nobody');
    }, 2_700_000);

    it('deletes the seven sites: releases and processes go with them', async () => {
      await Promise.all(
        Object.values(sites).map(async (site) => {
          const del = await h.deleteSite(site.uuid);
          await h.waitGone(site, del.operation.uuid, 600_000);
          expect((await run('ls', ['-A', '--', `/home/${user}/${site.domain}`])).code).not.toBe(0);
        }),
      );
      expect((await run('pgrep', ['-u', user, '-f', 'node'])).stdout.trim()).toBe('');
    }, 900_000);
  },
);
