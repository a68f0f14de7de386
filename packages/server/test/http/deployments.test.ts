/**
 * Deployments and rollbacks (deployments, items 3 and 5, control plane): 202 with the deployment
 * and its operation, the plan the deploy steps receive (built from the source, settings and
 * environment, secrets opened only in the job and redacted from its log), queued deploys collapsing
 * into the newest, cancel of a queued and of a running deployment, rollback to the previous kept
 * release, idempotency replay, paging, tenancy. The deploy steps are a recording stand-in
 * (support/recording-deploy-steps.ts): the steps on the server are tested with their own code.
 */

import { SiteplaneClient } from '@siteplane/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { TEST_DB } from '../support/test-service.js';
import {
  call,
  type DeployWorld,
  expectStatus,
  fieldsOf,
  installedSite,
  startDeployWorld,
  waitForDeployment,
} from './deploy-api.js';

describe(`deployments (${TEST_DB})`, () => {
  let w: DeployWorld;
  let site: string;
  const envSecret = 'Env-Secret-NoSecretAtRest-6a0c93';

  const deploy = (uuid: string, payload: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    call(w.s, 'POST', `/api/v1/sites/${uuid}/deployments`, { payload, headers });
  const bind = (uuid: string) =>
    expectStatus(
      call(w.s, 'PUT', `/api/v1/sites/${uuid}/source`, {
        payload: { vcProfile: w.githubProfile, repository: 'acme/monorepo', branch: 'trunk' },
      }),
      200,
    );

  beforeAll(async () => {
    w = await startDeployWorld();
    site = await installedSite(w, 'laravel', 'shop.example.com', { phpVersion: '8.2' });
    await bind(site);
    await expectStatus(
      call(w.s, 'PATCH', `/api/v1/sites/${site}/environment`, {
        payload: { set: { APP_KEY: { value: envSecret, scope: 'runtime' }, VITE_NAME: { value: 'Shop', scope: 'build' } } },
      }),
      200,
    );
  }, 60_000);
  afterAll(async () => w?.stop());
  afterEach(() => {
    w.steps.gate = null;
    w.steps.failAt.clear();
  });

  it('answers 202 with the deployment and runs the plan built from source, settings and environment', async () => {
    const res = await expectStatus(deploy(site), 202);
    const d = res.json();
    expect(res.headers.location).toBe(`/api/v1/deployments/${d.uuid}`);
    expect(d).toMatchObject({
      site,
      status: 'queued',
      trigger: 'manual',
      branch: 'trunk',
      commit: null,
      operation: { kind: 'deploy', status: 'queued' },
      superseded_by: null,
      started_at: null,
      duration_ms: null,
    });
    expect(d.release).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{7}$/);
    const done = await waitForDeployment(w, d.uuid, ['succeeded', 'failed']);
    expect(done.status, JSON.stringify(done)).toBe('succeeded');
    expect(done.commit).toEqual({
      sha: '0123456789abcdef0123456789abcdef01234567',
      message: 'tip of trunk',
      author: 'Dev <dev@example.com>',
    });
    expect(done.duration_ms).toBeGreaterThanOrEqual(0);

    const { plan } = w.steps.deploys.at(-1) ?? { plan: null };
    expect(plan).toMatchObject({
      deploymentUuid: d.uuid,
      release: d.release,
      source: {
        kind: 'git',
        url: `${w.github.baseUrl.replace(/\/api\/v3$/, '').replace(/\/$/, '')}/acme/monorepo.git`,
        branch: 'trunk',
        commit: null,
        appFolder: null,
        credentials: { httpsUser: 'x-access-token', httpsToken: w.fixture.token },
      },
      buildCommand: null,
      sharedPaths: [
        { path: '.env', kind: 'file' },
        { path: 'storage', kind: 'directory' },
      ],
      environment: { build: { VITE_NAME: 'Shop' }, runtime: { APP_KEY: envSecret } },
      keepReleases: 5,
      // The site's first deploy: no earlier release for prune to keep.
      keptReleases: [],
      healthCheck: { path: '/', timeoutSeconds: 30 },
    });
    expect(plan?.hooks.map((h) => h.name)).toEqual(['composer install', 'migrations', 'caches']);

    // The operation lists the steps; its log has the secrets the steps were given redacted.
    const op = (await expectStatus(call(w.s, 'GET', `/api/v1/operations/${d.operation.uuid}`), 200)).json();
    expect(op.kind).toBe('deploy');
    expect(op.steps.map((s: { name: string; status: string }) => `${s.name}:${s.status}`)).toEqual([
      'fetch:succeeded',
      'build:succeeded',
      'hook: composer install:succeeded',
      'hook: caches:succeeded',
      'activate:succeeded',
      'prune:succeeded',
    ]);
    const log = op.logs.map((l: { line: string }) => l.line).join('\n');
    expect(log).toContain('with token ***');
    expect(log).not.toContain(w.fixture.token);
    expect(log).not.toContain(envSecret);

    // The environment it ran with is the current one: the site no longer needs a deploy.
    const siteRecord = (await expectStatus(call(w.s, 'GET', `/api/v1/sites/${site}`), 200)).json();
    expect(siteRecord.deploy_needed).toBe(false);
  });

  it('deploys the branch and commit asked for; refuses bad ones with their field paths', async () => {
    const res = await expectStatus(deploy(site, { branch: 'release-1', commit: 'ABCDEF1234567' }), 202);
    expect(res.json()).toMatchObject({ branch: 'release-1', requested_commit: 'abcdef1234567' });
    const done = await waitForDeployment(w, res.json().uuid, ['succeeded', 'failed']);
    expect(done.commit.sha).toBe('abcdef1234567');
    expect(w.steps.deploys.at(-1)?.plan.source).toMatchObject({ branch: 'release-1', commit: 'abcdef1234567' });
    const bad = await expectStatus(deploy(site, { branch: '--upload-pack=x', commit: 'xyz', force: true }), 422);
    expect(fieldsOf(bad)).toEqual(['branch:invalid_format', 'commit:invalid_format', 'force:unknown_field']);
  });

  it('collapses deploys that queue behind a running one into the newest', async () => {
    let release!: () => void;
    w.steps.gate = new Promise<void>((r) => {
      release = r;
    });
    const running = (await expectStatus(deploy(site), 202)).json();
    await w.steps.waiting();
    const second = (await expectStatus(deploy(site, { commit: 'aaaaaaa' }), 202)).json();
    const third = (await expectStatus(deploy(site, { commit: 'bbbbbbb' }), 202)).json();
    const superseded = (await expectStatus(call(w.s, 'GET', `/api/v1/deployments/${second.uuid}`), 200)).json();
    expect(superseded).toMatchObject({ status: 'cancelled', superseded_by: third.uuid, operation: { status: 'cancelled' } });
    expect((await expectStatus(call(w.s, 'GET', `/api/v1/deployments/${running.uuid}`), 200)).json().status).toBe('running');
    const before = w.steps.deploys.length;
    release();
    expect((await waitForDeployment(w, running.uuid, ['succeeded', 'failed'])).status).toBe('succeeded');
    expect((await waitForDeployment(w, third.uuid, ['succeeded', 'failed'])).status).toBe('succeeded');
    // The superseded deploy never ran: only the newest did after the running one.
    expect(w.steps.deploys.slice(before).map((d) => d.plan.source.kind === 'git' && d.plan.source.commit)).toEqual(['bbbbbbb']);
    // Prune keeps what rollback offers: earlier successful releases, newest first; never the superseded one's.
    const kept = w.steps.deploys.at(-1)?.plan.keptReleases ?? [];
    expect(kept[0]).toBe(running.release);
    expect(kept).not.toContain(second.release);
    expect(kept).not.toContain(third.release);
    // Each outcome is in the team's change log: the superseded one cancelled, the others succeeded (issue 12).
    const events = await w.s.storage.db
      .selectFrom('events')
      .select(['kind', 'subject_uuid'])
      .where('kind', 'like', 'deployment.%')
      .execute();
    const kindOf = (uuid: string) => events.filter((e) => e.subject_uuid === uuid).map((e) => e.kind);
    expect(kindOf(second.uuid)).toEqual(['deployment.cancelled']);
    expect(kindOf(running.uuid)).toEqual(['deployment.succeeded']);
    expect(kindOf(third.uuid)).toEqual(['deployment.succeeded']);
  });

  it('cancels a queued deployment at once and a running one by its signal; a finished one is 409', async () => {
    w.steps.gate = new Promise<void>(() => {});
    const running = (await expectStatus(deploy(site), 202)).json();
    await w.steps.waiting();
    const queued = (await expectStatus(deploy(site), 202)).json();
    // No rollback while a deploy may still change the live release.
    const busy = await expectStatus(call(w.s, 'POST', `/api/v1/sites/${site}/rollback`), 409);
    expect(busy.json().detail).toContain(running.uuid);
    const now = await expectStatus(call(w.s, 'POST', `/api/v1/deployments/${queued.uuid}/cancel`), 200);
    expect(now.json()).toMatchObject({ status: 'cancelled', cancel_requested: true, superseded_by: null });

    const requested = await expectStatus(call(w.s, 'POST', `/api/v1/deployments/${running.uuid}/cancel`), 202);
    expect(requested.json()).toMatchObject({ status: 'running', cancel_requested: true });
    const done = await waitForDeployment(w, running.uuid, ['cancelled', 'failed', 'succeeded']);
    expect(done.status).toBe('cancelled');
    const op = (await expectStatus(call(w.s, 'GET', `/api/v1/operations/${running.operation.uuid}`), 200)).json();
    expect(op.status).toBe('cancelled');
    expect(op.steps.map((s: { name: string; status: string }) => `${s.name}:${s.status}`)).toEqual([
      'fetch:succeeded',
      'build:aborted',
      'hook: composer install:aborted',
      'hook: caches:aborted',
      'activate:aborted',
      'prune:aborted',
    ]);
    // The site is untouched: installed, serving its live release.
    expect((await expectStatus(call(w.s, 'GET', `/api/v1/sites/${site}`), 200)).json().status).toBe('installed');
    const finished = await expectStatus(call(w.s, 'POST', `/api/v1/deployments/${running.uuid}/cancel`), 409);
    expect(finished.json().code).toBe('deployment_finished');
    // The team's change log has both cancellations, the queued one's and the running one's (issue 12).
    const events = await w.s.storage.db
      .selectFrom('events')
      .select(['kind', 'subject_uuid'])
      .where('kind', '=', 'deployment.cancelled')
      .where('subject_uuid', 'in', [queued.uuid, running.uuid])
      .execute();
    expect(events.map((e) => e.subject_uuid).sort()).toEqual([queued.uuid, running.uuid].sort());
  });

  it('rolls back to the previous kept release, says what changed since, and marks the release it left bad', async () => {
    const other = await installedSite(w, 'laravel', 'rollback.example.com', { phpVersion: '8.2' });
    await bind(other);
    const none = await expectStatus(call(w.s, 'POST', `/api/v1/sites/${other}/rollback`, { payload: {} }), 422);
    expect(none.json().code).toBe('no_rollback_target');
    const first = (await expectStatus(deploy(other), 202)).json();
    await waitForDeployment(w, first.uuid, ['succeeded']);
    // Between the two deploys: the environment changes and migrations are switched on.
    await expectStatus(
      call(w.s, 'PATCH', `/api/v1/sites/${other}/environment`, {
        payload: { set: { FEATURE: { value: 'on', scope: 'runtime' } } },
      }),
      200,
    );
    const hooks = (await expectStatus(call(w.s, 'GET', `/api/v1/sites/${other}/deploy-settings`), 200)).json().hooks;
    hooks[1].enabled = true;
    await expectStatus(call(w.s, 'PATCH', `/api/v1/sites/${other}/deploy-settings`, { payload: { hooks } }), 200);
    const second = (await expectStatus(deploy(other), 202)).json();
    await waitForDeployment(w, second.uuid, ['succeeded']);

    const bad = await expectStatus(
      call(w.s, 'POST', `/api/v1/sites/${other}/rollback`, { payload: { release: second.release } }),
      422,
    );
    expect(fieldsOf(bad)).toEqual(['release:invalid_value']);
    const unknown = await expectStatus(
      call(w.s, 'POST', `/api/v1/sites/${other}/rollback`, { payload: { release: '20200101T000000Z-abcdef0' } }),
      422,
    );
    expect(fieldsOf(unknown)).toEqual(['release:not_found']);

    const res = await expectStatus(call(w.s, 'POST', `/api/v1/sites/${other}/rollback`), 202);
    const rb = res.json();
    expect(res.headers.location).toBe(`/api/v1/deployments/${rb.uuid}`);
    expect(rb).toMatchObject({
      trigger: 'rollback',
      release: first.release,
      operation: { kind: 'rollback', status: 'queued' },
      commit: { sha: '0123456789abcdef0123456789abcdef01234567' },
      rollback: { from_release: second.release, environment_changed: true, migrations_changed: true },
    });
    await waitForDeployment(w, rb.uuid, ['succeeded']);
    expect(w.steps.rollbacks.at(-1)?.plan).toEqual({ deploymentUuid: rb.uuid, release: first.release });
    const left = (await expectStatus(call(w.s, 'GET', `/api/v1/deployments/${second.uuid}`), 200)).json();
    expect(left.release_bad).toBe(true);
    // The live release is now the first; the only other kept one was left by a rollback.
    const again = await expectStatus(call(w.s, 'POST', `/api/v1/sites/${other}/rollback`), 422);
    expect(again.json().code).toBe('no_rollback_target');
  });

  it('fails a deploy whose step fails, leaving the site installed', async () => {
    w.steps.failAt.add('hook: caches');
    const d = (await expectStatus(deploy(site), 202)).json();
    const done = await waitForDeployment(w, d.uuid, ['succeeded', 'failed']);
    expect(done.status).toBe('failed');
    const op = (await expectStatus(call(w.s, 'GET', `/api/v1/operations/${d.operation.uuid}`), 200)).json();
    expect(op.error).toMatchObject({ step: 'hook: caches' });
    expect((await expectStatus(call(w.s, 'GET', `/api/v1/sites/${site}`), 200)).json().status).toBe('installed');
  });

  it('replays a deployment request with the same Idempotency-Key', async () => {
    const first = await expectStatus(deploy(site, {}, { 'idempotency-key': 'deploy-once-1' }), 202);
    const replay = await expectStatus(deploy(site, {}, { 'idempotency-key': 'deploy-once-1' }), 202);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().uuid).toBe(first.json().uuid);
    await waitForDeployment(w, first.json().uuid, ['succeeded', 'failed', 'cancelled']);
  });

  it('lists a site’s deployments oldest first, cursor-paged', async () => {
    const all = (
      await expectStatus(call(w.s, 'GET', `/api/v1/sites/${site}/deployments?limit=500`, { token: w.s.readToken }), 200)
    ).json();
    expect(all.data.length).toBeGreaterThanOrEqual(5);
    const page = await expectStatus(call(w.s, 'GET', `/api/v1/sites/${site}/deployments?limit=2`), 200);
    expect(page.json().data.map((d: { uuid: string }) => d.uuid)).toEqual(
      all.data.slice(0, 2).map((d: { uuid: string }) => d.uuid),
    );
    expect(page.headers.link).toContain('rel="next"');
    const next = await expectStatus(
      call(w.s, 'GET', `/api/v1/sites/${site}/deployments?limit=2&cursor=${page.json().meta.next_cursor}`),
      200,
    );
    expect(next.json().data[0].uuid).toBe(all.data[2].uuid);
  });

  it('refuses a site without source, another tenant’s site or deployment (404) and read-only tokens (403)', async () => {
    const bare = await installedSite(w, 'static-html', 'bare.example.com');
    const missing = await expectStatus(deploy(bare), 422);
    expect(missing.json().code).toBe('source_missing');
    const d = (await expectStatus(call(w.s, 'GET', `/api/v1/sites/${site}/deployments?limit=1`), 200)).json().data[0];
    const t = w.s.otherTenantToken;
    for (const [method, url] of [
      ['POST', `/api/v1/sites/${site}/deployments`],
      ['GET', `/api/v1/sites/${site}/deployments`],
      ['GET', `/api/v1/deployments/${d.uuid}`],
      ['POST', `/api/v1/deployments/${d.uuid}/cancel`],
      ['POST', `/api/v1/sites/${site}/rollback`],
    ] as const)
      expect((await call(w.s, method, url, { token: t, payload: method === 'POST' ? {} : undefined })).statusCode, url).toBe(404);
    for (const url of [
      `/api/v1/sites/${site}/deployments`,
      `/api/v1/deployments/${d.uuid}/cancel`,
      `/api/v1/sites/${site}/rollback`,
    ])
      expect((await call(w.s, 'POST', url, { token: w.s.readToken, payload: {} })).statusCode, url).toBe(403);
  });
});

describe(`deployments with the service's own deploy steps (${TEST_DB})`, () => {
  let w: DeployWorld;
  beforeAll(async () => {
    w = await startDeployWorld({ deploySteps: false });
  }, 60_000);
  afterAll(async () => w?.stop());

  it('runs provisioning/deploy on the server: on a dry-run server its commands are recorded in the operation log', async () => {
    const site = await installedSite(w, 'static-html', 'plain.example.com');
    await expectStatus(
      call(w.s, 'PUT', `/api/v1/sites/${site}/source`, {
        payload: { vcProfile: w.githubProfile, repository: 'acme/monorepo', branch: 'trunk' },
      }),
      200,
    );
    const d = (await expectStatus(call(w.s, 'POST', `/api/v1/sites/${site}/deployments`, { payload: {} }), 202)).json();
    const done = await waitForDeployment(w, d.uuid, ['succeeded', 'failed']);
    const op = (await expectStatus(call(w.s, 'GET', `/api/v1/operations/${d.operation.uuid}?limit=1000`), 200)).json();
    const steps = op.steps.map((st: { name: string }) => st.name);
    expect(steps.slice(0, 2)).toEqual(['ensure git', 'fetch']);
    expect(op.logs.map((l: { line: string }) => l.line).join('\n')).toMatch(/would run: .*git/);
    expect(['succeeded', 'failed']).toContain(done.status);
  });
});

describe(`deploys per server (SITEPLANE_DEPLOYS_PER_SERVER; ${TEST_DB})`, () => {
  for (const limit of [1, 2]) {
    it(`runs at most ${limit} deployment(s) on one server at once`, async () => {
      const w = await startDeployWorld({ env: { SITEPLANE_DEPLOYS_PER_SERVER: String(limit) } });
      try {
        const sites: string[] = [];
        for (const name of ['a', 'b', 'c']) {
          const uuid = await installedSite(w, 'static-html', `${name}.limit.example.com`);
          await expectStatus(
            call(w.s, 'PUT', `/api/v1/sites/${uuid}/source`, {
              payload: { vcProfile: w.githubProfile, repository: 'acme/monorepo', branch: 'trunk' },
            }),
            200,
          );
          sites.push(uuid);
        }
        let release!: () => void;
        w.steps.gate = new Promise<void>((r) => {
          release = r;
        });
        const started = [];
        for (const uuid of sites)
          started.push((await expectStatus(call(w.s, 'POST', `/api/v1/sites/${uuid}/deployments`, { payload: {} }), 202)).json());
        // Every job is claimed (three sites, four workers); only `limit` of them get past their slot.
        for (const d of started) await waitForDeployment(w, d.uuid, ['running']);
        const until = Date.now() + 10_000;
        while (w.steps.atGate < limit && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
        await new Promise((r) => setTimeout(r, 300));
        expect(w.steps.atGate).toBe(limit);
        release();
        for (const d of started) expect((await waitForDeployment(w, d.uuid, ['succeeded', 'failed'])).status).toBe('succeeded');
      } finally {
        await w.stop();
      }
    }, 60_000);
  }
});

describe(`the SDK's deployment calls (${TEST_DB})`, () => {
  let w: DeployWorld;
  beforeAll(async () => {
    w = await startDeployWorld();
  }, 60_000);
  afterAll(async () => w?.stop());

  it('binds, configures, deploys, lists and rolls back through SiteplaneClient', async () => {
    // The client's fetch, answered by the service in process.
    const fetchViaInject: typeof fetch = async (input, init) => {
      const url = new URL(String(input));
      const res = await w.s.app.inject({
        method: (init?.method ?? 'GET') as 'GET',
        url: url.pathname + url.search,
        headers: init?.headers as Record<string, string>,
        ...(init?.body ? { payload: String(init.body) } : {}),
      });
      return new Response(res.statusCode === 204 ? null : res.body, {
        status: res.statusCode,
        headers: res.headers as HeadersInit,
      });
    };
    const client = new SiteplaneClient({ baseUrl: 'http://siteplane.test', token: w.s.token, fetch: fetchViaInject });
    const site = await installedSite(w, 'nodejs-ssr', 'sdk.example.com');
    const source = await client.setSiteSource(site, { vcProfile: w.githubProfile, repository: 'acme/monorepo', branch: 'trunk' });
    expect(source?.auth).toBe('token');
    expect((await client.getSiteSource(site)).branch).toBe('trunk');
    expect((await client.updateDeploySettings(site, { keepReleases: 2 })).keep_releases).toBe(2);
    expect((await client.getDeploySettings(site)).keep_releases).toBe(2);
    await client.updateEnvironment(site, { set: { NODE_ENV: { value: 'production', scope: 'build' } } });
    expect((await client.getEnvironment(site)).variables).toEqual([expect.objectContaining({ key: 'NODE_ENV', scope: 'build' })]);
    const first = await client.deploy(site);
    await waitForDeployment(w, String(first.uuid), ['succeeded']);
    const second = await client.deploy(site, {}, 'sdk-key-1');
    await waitForDeployment(w, String(second.uuid), ['succeeded']);
    expect((await client.listDeployments(site)).map((d) => d.uuid)).toEqual([first.uuid, second.uuid]);
    const rb = await client.rollback(site);
    expect(rb).toMatchObject({ trigger: 'rollback', release: first.release });
    await waitForDeployment(w, String(rb.uuid), ['succeeded']);
    expect((await client.getDeployment(String(second.uuid))).release_bad).toBe(true);
    await expect(client.cancelDeployment(String(rb.uuid))).rejects.toMatchObject({ status: 409 });
    await client.unbindSiteSource(site);
    await expect(client.getSiteSource(site)).rejects.toMatchObject({ status: 404 });
  });
});
