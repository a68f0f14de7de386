/**
 * A site's source, deploy settings and environment (deployments, items 1-2): the repository and
 * branch checked through the profile, deploy keys for ssh remotes, per-type defaults, hooks the
 * user reorders and disables, environment values sealed and never returned, every violation with
 * its field path, other tenants' sites not found, read-only tokens refused, types that do not
 * deploy answered with not_deployable.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DB } from '../support/test-service.js';
import {
  call,
  type DeployWorld,
  expectStatus,
  fieldsOf,
  HTTPS_REMOTE_SECRET,
  installedSite,
  startDeployWorld,
} from './deploy-api.js';

describe(`site source, deploy settings and environment (${TEST_DB})`, () => {
  let w: DeployWorld;
  let laravel: string;
  let wordpress: string;
  let node: string;

  beforeAll(async () => {
    w = await startDeployWorld();
    laravel = await installedSite(w, 'laravel', 'app.example.com', { phpVersion: '8.2' });
    wordpress = await installedSite(w, 'wordpress', 'blog.example.com', { performInstallSetup: false });
    node = await installedSite(w, 'nodejs-ssr', 'node.example.com', { buildCommand: 'npm run build:prod', artifactPath: 'dist' });
  }, 60_000);
  afterAll(async () => w?.stop());

  describe('PUT/GET/DELETE …/source', () => {
    it('binds a site to a GitHub repository and branch checked through the profile; the token is never returned', async () => {
      const res = await expectStatus(
        call(w.s, 'PUT', `/api/v1/sites/${laravel}/source`, {
          payload: { vcProfile: w.githubProfile, repository: 'acme/monorepo', branch: 'release-1', appFolder: 'apps/web' },
        }),
        200,
      );
      expect(res.json()).toMatchObject({
        site: laravel,
        vc_profile: w.githubProfile,
        provider: 'github',
        repository: 'acme/monorepo',
        branch: 'release-1',
        app_folder: 'apps/web',
        auth: 'token',
        deploy_public_key: null,
      });
      expect(res.body).not.toContain(w.fixture.token);
      const got = await expectStatus(call(w.s, 'GET', `/api/v1/sites/${laravel}/source`, { token: w.s.readToken }), 200);
      expect(got.json()).toEqual(res.json());
    });

    it('refuses an unknown profile, repository or branch with 422 naming the field', async () => {
      const put = (payload: Record<string, unknown>) => call(w.s, 'PUT', `/api/v1/sites/${laravel}/source`, { payload });
      const base = { vcProfile: w.githubProfile, repository: 'acme/monorepo', branch: 'trunk' };
      expect(fieldsOf(await expectStatus(put({ ...base, vcProfile: '00000000-0000-4000-8000-000000000000' }), 422))).toEqual([
        'vcProfile:not_found',
      ]);
      expect(fieldsOf(await expectStatus(put({ ...base, repository: 'acme/nope' }), 422))).toEqual([
        'repository:repository_not_found',
      ]);
      expect(fieldsOf(await expectStatus(put({ ...base, branch: 'no-such-branch' }), 422))).toEqual(['branch:not_found']);
      // Shape violations, all at once, before any provider is asked.
      const shape = await expectStatus(put({ vcProfile: 'x', branch: '-rf', appFolder: '../etc', extra: 1 }), 422);
      expect(fieldsOf(shape)).toEqual([
        'appFolder:invalid_format',
        'branch:invalid_format',
        'extra:unknown_field',
        'repository:required',
        'vcProfile:invalid_format',
      ]);
      // Nothing changed.
      const got = await expectStatus(call(w.s, 'GET', `/api/v1/sites/${laravel}/source`), 200);
      expect(got.json().branch).toBe('release-1');
    });

    it('gives a site bound to an ssh remote its own ed25519 deploy key, kept when the binding changes', async () => {
      const put = (branch: string) =>
        expectStatus(
          call(w.s, 'PUT', `/api/v1/sites/${node}/source`, {
            payload: { vcProfile: w.gitProfile, repository: 'acme/shop', branch },
          }),
          200,
        );
      const first = (await put('main')).json();
      expect(first.auth).toBe('deploy_key');
      expect(first.deploy_public_key).toMatch(/^ssh-ed25519 AAAA[0-9A-Za-z+/]+=* siteplane-deploy@node\.example\.com$/);
      const again = (await put('develop')).json();
      expect(again.deploy_public_key).toBe(first.deploy_public_key);
      expect(again.branch).toBe('develop');
      const row = await w.s.storage.db
        .selectFrom('site_sources')
        .selectAll()
        .where('site_uuid', '=', node)
        .executeTakeFirstOrThrow();
      expect(row.deploy_private_key_enc).toMatch(/^v1\./);
    });

    it('keeps an https remote’s credentials sealed and out of every answer', async () => {
      const res = await expectStatus(
        call(w.s, 'PUT', `/api/v1/sites/${node}/source`, {
          payload: { vcProfile: w.gitProfile, repository: 'acme/private', branch: 'main' },
        }),
        200,
      );
      expect(res.json().auth).toBe('token');
      expect(res.body).not.toContain(HTTPS_REMOTE_SECRET);
    });

    it('unbinds with PUT null and with DELETE; the source is then not found', async () => {
      const site = await installedSite(w, 'static-html', 'unbind.example.com');
      const bind = () =>
        expectStatus(
          call(w.s, 'PUT', `/api/v1/sites/${site}/source`, {
            payload: { vcProfile: w.githubProfile, repository: 'acme/monorepo', branch: 'trunk' },
          }),
          200,
        );
      await bind();
      await expectStatus(call(w.s, 'PUT', `/api/v1/sites/${site}/source`, { payload: null }), 204);
      await expectStatus(call(w.s, 'GET', `/api/v1/sites/${site}/source`), 404);
      await bind();
      await expectStatus(call(w.s, 'DELETE', `/api/v1/sites/${site}/source`), 204);
      await expectStatus(call(w.s, 'GET', `/api/v1/sites/${site}/source`), 404);
    });
  });

  describe('deploy settings', () => {
    it('starts from the type’s defaults: Laravel composer from the lock file, opt-in migrations, caches, shared .env and storage', async () => {
      const res = await expectStatus(call(w.s, 'GET', `/api/v1/sites/${laravel}/deploy-settings`, { token: w.s.readToken }), 200);
      const body = res.json();
      expect(body.hooks.map((h: { name: string; enabled: boolean }) => `${h.name}:${h.enabled}`)).toEqual([
        'composer install:true',
        'migrations:false',
        'caches:true',
      ]);
      expect(body.hooks[0].command).toContain('composer.lock');
      expect(body.shared_paths).toEqual([
        { path: '.env', kind: 'file' },
        { path: 'storage', kind: 'directory' },
      ]);
      expect(body).toMatchObject({ keep_releases: 5, health_check: { path: '/', timeout_seconds: 30 }, build_command: null });
      expect(body.platform_steps).toEqual(['fetch', 'build', 'activate', 'prune']);
      expect(body.defaults).toHaveLength(6);
      expect(body.start_command).toBeNull();
    });

    it('takes buildCommand and artifactPath from the site’s options (Node: npm ci)', async () => {
      const body = (await expectStatus(call(w.s, 'GET', `/api/v1/sites/${node}/deploy-settings`), 200)).json();
      expect(body).toMatchObject({ build_command: 'npm run build:prod', artifact_path: 'dist' });
      expect(body.hooks.map((h: { name: string }) => h.name)).toEqual(['npm ci']);
    });

    it('lets the user add, reorder and disable hooks, and resets a setting to its default', async () => {
      const hooks = [
        { name: 'caches', command: 'php artisan optimize', stage: 'before-activate', enabled: true },
        { name: 'migrations', command: 'php artisan migrate --force', stage: 'before-activate', enabled: true },
        { name: 'composer install', command: 'composer install --no-dev', stage: 'after-fetch', enabled: false },
        { name: 'queue restart', command: 'php artisan queue:restart', stage: 'after-activate', enabled: true },
      ];
      const res = await expectStatus(
        call(w.s, 'PATCH', `/api/v1/sites/${laravel}/deploy-settings`, {
          payload: { hooks, keepReleases: 3, healthCheck: { path: '/up', timeoutSeconds: 10 } },
        }),
        200,
      );
      expect(res.json()).toMatchObject({ hooks, keep_releases: 3, health_check: { path: '/up', timeout_seconds: 10 } });
      expect(res.json().defaults).toEqual(['buildCommand', 'artifactPath', 'sharedPaths']);
      const reset = await expectStatus(
        call(w.s, 'PATCH', `/api/v1/sites/${laravel}/deploy-settings`, { payload: { reset: ['keepReleases'] } }),
        200,
      );
      expect(reset.json()).toMatchObject({ hooks, keep_releases: 5 });
    });

    it('reports every shape violation at once with its field path, and changes nothing', async () => {
      const res = await expectStatus(
        call(w.s, 'PATCH', `/api/v1/sites/${laravel}/deploy-settings`, {
          payload: {
            keepReleases: 0,
            artifactPath: '/etc',
            hooks: [{ name: 'x', command: '', stage: 'sometime', enabled: 'yes' }],
            sharedPaths: [{ path: 'a/../../b', kind: 'file' }],
            healthCheck: { path: 'no-slash', timeoutSeconds: 30 },
            reset: ['everything'],
            color: 'blue',
          },
        }),
        422,
      );
      expect(fieldsOf(res)).toEqual(
        expect.arrayContaining([
          'keepReleases:out_of_range',
          'artifactPath:invalid_format',
          'hooks.0.command:too_short',
          'hooks.0.enabled:invalid_type',
          'reset.0:invalid_value',
          'sharedPaths.0.path:invalid_format',
          'healthCheck.path:invalid_format',
          'color:unknown_field',
        ]),
      );
      expect(fieldsOf(res).some((f) => f.startsWith('hooks.0.stage:'))).toBe(true);
      const body = (await expectStatus(call(w.s, 'GET', `/api/v1/sites/${laravel}/deploy-settings`), 200)).json();
      expect(body.keep_releases).toBe(5);
    });

    it('takes a start command for Generic Port only, and refuses its deploy without one (422 naming startCommand), creating nothing', async () => {
      const generic = await installedSite(w, 'generic-port', 'port.example.com', { port: 9123 });
      const settings = `/api/v1/sites/${generic}/deploy-settings`;
      expect((await expectStatus(call(w.s, 'GET', settings), 200)).json()).toMatchObject({
        start_command: null,
        hooks: [],
        build_command: null,
      });
      await expectStatus(
        call(w.s, 'PUT', `/api/v1/sites/${generic}/source`, {
          payload: { vcProfile: w.githubProfile, repository: 'acme/monorepo', branch: 'trunk' },
        }),
        200,
      );
      const deploy = () => call(w.s, 'POST', `/api/v1/sites/${generic}/deployments`, { payload: {} });
      const refused = await expectStatus(deploy(), 422);
      expect(fieldsOf(refused)).toEqual(['startCommand:required']);
      expect(refused.json().errors[0].message).toMatch(/PORT/);
      const list = await expectStatus(call(w.s, 'GET', `/api/v1/sites/${generic}/deployments`), 200);
      expect(list.json().data).toEqual([]);

      // Shape: an empty command or a control character, each on the field.
      for (const [startCommand, code] of [
        ['', 'too_short'],
        ['node server.js\u0007', 'invalid_format'],
      ] as const) {
        const bad = await expectStatus(call(w.s, 'PATCH', settings, { payload: { startCommand } }), 422);
        expect(fieldsOf(bad)).toEqual([`startCommand:${code}`]);
      }
      // Other types start the way their framework does.
      const other = await expectStatus(
        call(w.s, 'PATCH', `/api/v1/sites/${node}/deploy-settings`, { payload: { startCommand: 'node server.js' } }),
        422,
      );
      expect(fieldsOf(other)).toEqual(['startCommand:not_allowed_for_type']);

      const command = 'python3 -m http.server "$PORT" --bind 127.0.0.1';
      const set = await expectStatus(call(w.s, 'PATCH', settings, { payload: { startCommand: command } }), 200);
      expect(set.json()).toMatchObject({ start_command: command });
      expect(set.json().defaults).not.toContain('startCommand');
      expect((await expectStatus(call(w.s, 'GET', settings, { token: w.s.readToken }), 200)).json().start_command).toBe(command);
      await expectStatus(deploy(), 202);

      // Reset: the setting is gone, and so is the next deploy.
      const reset = await expectStatus(call(w.s, 'PATCH', settings, { payload: { reset: ['startCommand'] } }), 200);
      expect(reset.json()).toMatchObject({ start_command: null });
      expect(fieldsOf(await expectStatus(deploy(), 422))).toEqual(['startCommand:required']);
    });

    it('refuses hooks named after a platform step or listed twice, and nested shared paths', async () => {
      const res = await expectStatus(
        call(w.s, 'PATCH', `/api/v1/sites/${laravel}/deploy-settings`, {
          payload: {
            hooks: [
              { name: 'activate', command: 'true', stage: 'after-fetch', enabled: true },
              { name: 'warm', command: 'true', stage: 'after-activate', enabled: true },
              { name: 'Warm', command: 'true', stage: 'after-activate', enabled: true },
            ],
            sharedPaths: [
              { path: 'storage', kind: 'directory' },
              { path: 'storage/logs', kind: 'directory' },
            ],
          },
        }),
        422,
      );
      expect(fieldsOf(res)).toEqual([
        'hooks.0.name:not_allowed',
        'hooks.2.name:duplicate',
        'sharedPaths.1.path:conflicting_values',
      ]);
    });
  });

  describe('environment', () => {
    it('sets and unsets per key, seals values, never returns them, and marks the site deploy_needed', async () => {
      const site = await installedSite(w, 'laravel', 'env.example.com', { phpVersion: '8.2' });
      const before = (await expectStatus(call(w.s, 'GET', `/api/v1/sites/${site}`), 200)).json();
      expect(before.deploy_needed).toBe(false);
      const secret = 'Env-Value-NoSecretAtRest-81be4f';
      const res = await expectStatus(
        call(w.s, 'PATCH', `/api/v1/sites/${site}/environment`, {
          payload: { set: { APP_KEY: { value: secret, scope: 'runtime' }, NODE_ENV: { value: 'production', scope: 'build' } } },
        }),
        200,
      );
      expect(res.body).not.toContain(secret);
      expect(res.json().variables.map((v: { key: string; scope: string }) => `${v.key}:${v.scope}`)).toEqual([
        'APP_KEY:runtime',
        'NODE_ENV:build',
      ]);
      expect(res.json().deploy_needed).toBe(true);
      await expectStatus(call(w.s, 'PATCH', `/api/v1/sites/${site}/environment`, { payload: { unset: ['NODE_ENV'] } }), 200);
      const got = await expectStatus(call(w.s, 'GET', `/api/v1/sites/${site}/environment`, { token: w.s.readToken }), 200);
      expect(got.json().variables.map((v: { key: string }) => v.key)).toEqual(['APP_KEY']);
      expect(got.body).not.toContain(secret);
      const siteRecord = (await expectStatus(call(w.s, 'GET', `/api/v1/sites/${site}`), 200)).json();
      expect(siteRecord.deploy_needed).toBe(true);
      const row = await w.s.storage.db
        .selectFrom('site_environment')
        .selectAll()
        .where('site_uuid', '=', site)
        .executeTakeFirstOrThrow();
      expect(row.value_enc).toMatch(/^v1\./);
      expect(row.value_enc).not.toContain(secret);
    });

    it('refuses bad keys, oversized values and a key both set and unset, all at once', async () => {
      const res = await expectStatus(
        call(w.s, 'PATCH', `/api/v1/sites/${laravel}/environment`, {
          payload: {
            set: {
              '1BAD': { value: 'x', scope: 'runtime' },
              BIG: { value: 'x'.repeat(40_000), scope: 'build' },
              OK: { value: 'y', scope: 'both' },
            },
            unset: ['bad-key'],
          },
        }),
        422,
      );
      const fields = fieldsOf(res);
      expect(fields).toEqual(expect.arrayContaining(['set.BIG.value:too_long', 'unset.0:invalid_format']));
      expect(fields).toContain('set.1BAD:unknown_field');
      expect(fields.some((f) => f.startsWith('set.OK.scope'))).toBe(true);
      const both = await expectStatus(
        call(w.s, 'PATCH', `/api/v1/sites/${laravel}/environment`, {
          payload: { set: { A: { value: 'v', scope: 'build' } }, unset: ['A'] },
        }),
        422,
      );
      expect(fieldsOf(both)).toEqual(['unset.0:conflicting_values']);
      const got = (await expectStatus(call(w.s, 'GET', `/api/v1/sites/${laravel}/environment`), 200)).json();
      expect(got.variables).toEqual([]);
    });
  });

  describe('tenancy, scopes and types that do not deploy', () => {
    it('answers 404 for another tenant’s site on every route', async () => {
      const t = w.s.otherTenantToken;
      for (const [method, url, payload] of [
        ['GET', `/api/v1/sites/${laravel}/source`, undefined],
        ['PUT', `/api/v1/sites/${laravel}/source`, { vcProfile: w.githubProfile, repository: 'acme/monorepo', branch: 'trunk' }],
        ['DELETE', `/api/v1/sites/${laravel}/source`, undefined],
        ['GET', `/api/v1/sites/${laravel}/deploy-settings`, undefined],
        ['PATCH', `/api/v1/sites/${laravel}/deploy-settings`, { keepReleases: 2 }],
        ['GET', `/api/v1/sites/${laravel}/environment`, undefined],
        ['PATCH', `/api/v1/sites/${laravel}/environment`, { unset: ['A'] }],
      ] as const) {
        const res = await call(w.s, method, url, { token: t, payload });
        expect(res.statusCode, `${method} ${url}`).toBe(404);
      }
    });

    it('refuses writes with a read-only token (403)', async () => {
      const t = w.s.readToken;
      expect((await call(w.s, 'PUT', `/api/v1/sites/${laravel}/source`, { token: t, payload: null })).statusCode).toBe(403);
      expect((await call(w.s, 'DELETE', `/api/v1/sites/${laravel}/source`, { token: t })).statusCode).toBe(403);
      expect((await call(w.s, 'PATCH', `/api/v1/sites/${laravel}/deploy-settings`, { token: t, payload: {} })).statusCode).toBe(
        403,
      );
      expect((await call(w.s, 'PATCH', `/api/v1/sites/${laravel}/environment`, { token: t, payload: {} })).statusCode).toBe(403);
    });

    it('answers not_deployable with the reason for WordPress on every deploy route', async () => {
      for (const [method, url, payload] of [
        ['GET', `/api/v1/sites/${wordpress}/source`, undefined],
        [
          'PUT',
          `/api/v1/sites/${wordpress}/source`,
          { vcProfile: w.githubProfile, repository: 'acme/monorepo', branch: 'trunk' },
        ],
        ['GET', `/api/v1/sites/${wordpress}/deploy-settings`, undefined],
        ['PATCH', `/api/v1/sites/${wordpress}/deploy-settings`, { keepReleases: 2 }],
        ['GET', `/api/v1/sites/${wordpress}/environment`, undefined],
        ['PATCH', `/api/v1/sites/${wordpress}/environment`, { unset: ['A'] }],
        ['POST', `/api/v1/sites/${wordpress}/deployments`, {}],
        ['GET', `/api/v1/sites/${wordpress}/deployments`, undefined],
        ['POST', `/api/v1/sites/${wordpress}/rollback`, {}],
      ] as const) {
        const res = await call(w.s, method, url, { payload });
        expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(422);
        expect(res.json().code).toBe('not_deployable');
        expect(res.json().detail).toMatch(/WordPress/);
      }
    });
  });
});
