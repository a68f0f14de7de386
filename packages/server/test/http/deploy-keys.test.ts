// Issue 11 item 1: "a deploy key Siteplane generates per site and registers through the provider's
// API where the token allows (shown to the user otherwise)". The real VC code against each hosted
// provider's stand-in (its deploy-key endpoints as documented): registered read-only, refused for
// lack of rights (the binding still succeeds, saying why), removed at the provider when the source
// is unbound or re-bound and when the site is deleted, and the deploy fetching over ssh with it.
import { SiteplaneClient } from '@siteplane/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeployKeyFixture } from '../standins/vcs/deploy-key-endpoints.js';
import { fullName, makeFixture } from '../standins/vcs/fixture.js';
import { integrationsWithGitHost } from '../support/git-host-standin.js';
import { type RecordingDeploySteps, recordingDeploySteps } from '../support/recording-deploy-steps.js';
import {
  LOOPBACK_TARGETS,
  seedServer,
  startTestService,
  TEST_DB,
  type TestService,
  waitForStatus,
} from '../support/test-service.js';
import { call, type DeployWorld, expectStatus, fieldsOf, installedSite, waitForDeployment } from './deploy-api.js';
import { createProfile, HOSTED_CASES, type HostedStandin } from './vc-api.js';

const ED25519 = /^ssh-ed25519 AAAA[0-9A-Za-z+/]+=* siteplane-deploy@/;

describe.each(HOSTED_CASES)(`deploy keys registered at $provider (${TEST_DB})`, (c) => {
  let fixture: DeployKeyFixture;
  let standin: HostedStandin;
  let s: TestService;
  let steps: RecordingDeploySteps;
  let world: DeployWorld;
  let profile: string;
  let n = 0;

  const repo = (i: number) => fullName(fixture.repos[i] ?? fixture.big);
  const put = (site: string, payload: Record<string, unknown>) => call(s, 'PUT', `/api/v1/sites/${site}/source`, { payload });
  const bind = async (site: string, i: number, extra: Record<string, unknown> = { access: 'deploy_key' }) =>
    (await expectStatus(put(site, { vcProfile: profile, repository: repo(i), branch: 'main', ...extra }), 200)).json();
  const newSite = () => installedSite(world, 'static-html', `${c.provider}-${++n}.keys.example.com`);
  const keysAt = (i: number) => (fixture.deployKeys ?? []).filter((k) => k.repository === repo(i));
  const removals = (site: string) =>
    s.storage.db.selectFrom('deploy_key_removals').selectAll().where('site_uuid', '=', site).orderBy('created_at').execute();

  beforeAll(async () => {
    fixture = makeFixture({ nested: c.nested });
    standin = await c.start(fixture);
    steps = recordingDeploySteps();
    const env = { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS };
    // Plain git profiles' ssh remotes are answered by a stand-in (they are unreachable here).
    s = await startTestService({ env, integrations: integrationsWithGitHost(env), deploySteps: steps, cancelPollMs: 25 });
    const ids = await seedServer(s, {});
    world = { s, ids } as unknown as DeployWorld;
    profile = (await createProfile(s, { provider: c.provider, name: 'main', token: fixture.token, baseUrl: standin.baseUrl }))
      .uuid;
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    await standin?.server.close();
  });

  it('generates a key for the site, registers it read-only, and deploys over the provider’s ssh address with it', async () => {
    const site = await newSite();
    const record = await bind(site, 1);
    expect(record).toMatchObject({
      provider: c.provider,
      repository: repo(1),
      auth: 'deploy_key',
      deploy_public_key: expect.stringMatching(ED25519),
      deploy_key_registration: { status: 'registered', provider_key_id: expect.any(String), reason: null },
    });
    const [added, ...more] = keysAt(1);
    expect(more).toEqual([]);
    expect(added).toMatchObject({ id: record.deploy_key_registration.provider_key_id, readOnly: true });
    expect(added?.key).toBe(record.deploy_public_key);
    // Read-only as each API says it: GitHub/Gitea read_only, GitLab can_push false; Bitbucket's always are.
    if (c.provider === 'gitlab') expect(added?.sent.can_push).toBe(false);
    else if (c.provider !== 'bitbucket') expect(added?.sent.read_only).toBe(true);
    // The token went in the auth header only; the private key went nowhere.
    const post = standin.server.requests.find((r) => r.method === 'POST' && /keys$/.test(r.url));
    expect(post?.body).not.toContain(fixture.token);
    expect(post?.body).not.toContain('PRIVATE KEY');
    expect(JSON.stringify(record)).not.toContain('PRIVATE KEY');

    // The clone address is the provider's ssh one, sealed; the key sealed too.
    const row = await s.storage.db.selectFrom('site_sources').selectAll().where('site_uuid', '=', site).executeTakeFirstOrThrow();
    expect(row.deploy_private_key_enc).toMatch(/^v1\./);
    expect(s.useCases.secrets.open(row.clone_url_enc)).toBe(`git@127.0.0.1:${repo(1)}.git`);

    // A deploy fetches from there with the site's key, never the token.
    const d = (await expectStatus(call(s, 'POST', `/api/v1/sites/${site}/deployments`, { payload: {} }), 202)).json();
    await waitForDeployment(world, d.uuid, ['succeeded']);
    const source = steps.deploys.at(-1)?.plan.source;
    expect(source).toMatchObject({ kind: 'git', url: `git@127.0.0.1:${repo(1)}.git` });
    const credentials = source?.kind === 'git' ? source.credentials : null;
    expect(credentials && 'sshPrivateKey' in credentials ? credentials.sshPrivateKey : '').toContain('OPENSSH PRIVATE KEY');
    const op = (await expectStatus(call(s, 'GET', `/api/v1/operations/${d.operation.uuid}`), 200)).json();
    expect(JSON.stringify(op.logs)).not.toContain('OPENSSH PRIVATE KEY');
  });

  it('keeps the key and its registration when the binding changes only its branch', async () => {
    const site = await newSite();
    const first = await bind(site, 2);
    const posts = standin.server.requests.filter((r) => r.method === 'POST').length;
    const again = await bind(site, 2, { access: 'deploy_key', branch: 'develop' });
    expect(again.branch).toBe('develop');
    expect(again.deploy_public_key).toBe(first.deploy_public_key);
    expect(again.deploy_key_registration).toEqual(first.deploy_key_registration);
    expect(standin.server.requests.filter((r) => r.method === 'POST').length).toBe(posts);
    expect(keysAt(2)).toHaveLength(1);
  });

  it('a token without the right to manage deploy keys: still bound, the key shown, not registered and why', async () => {
    const site = await newSite();
    fixture.keyAdmin = false;
    try {
      const record = await bind(site, 3);
      expect(record.auth).toBe('deploy_key');
      expect(record.deploy_public_key).toMatch(ED25519);
      expect(record.deploy_key_registration).toEqual({
        status: 'not_registered',
        provider_key_id: null,
        reason: expect.stringMatching(/refused to add the deploy key \(.*403.*\).*by hand/),
      });
      expect(record.deploy_key_registration.reason).not.toContain(fixture.token);
      expect(keysAt(3)).toEqual([]);
      // GET shows the same, so the user sees it later too.
      const got = (await expectStatus(call(s, 'GET', `/api/v1/sites/${site}/source`), 200)).json();
      expect(got.deploy_key_registration).toEqual(record.deploy_key_registration);
    } finally {
      fixture.keyAdmin = true;
    }
    // Once the token has the right, PUT again registers the same key.
    const retried = await bind(site, 3);
    expect(retried.deploy_key_registration.status).toBe('registered');
    expect(keysAt(3).map((k) => k.key)).toEqual([retried.deploy_public_key]);
  });

  it('unbinding removes the key at the provider and records it', async () => {
    const site = await newSite();
    const record = await bind(site, 4);
    expect(keysAt(4)).toHaveLength(1);
    await expectStatus(call(s, 'DELETE', `/api/v1/sites/${site}/source`), 204);
    expect(keysAt(4)).toEqual([]);
    const listed = (
      await expectStatus(call(s, 'GET', `/api/v1/sites/${site}/source/deploy-key-removals`, { token: s.readToken }), 200)
    ).json();
    expect(listed).toEqual({
      data: [
        {
          uuid: expect.any(String),
          provider: c.provider,
          repository: repo(4),
          provider_key_id: record.deploy_key_registration.provider_key_id,
          cause: 'unbound',
          outcome: 'removed',
          detail: null,
          created_at: expect.any(String),
        },
      ],
      meta: { next_cursor: null, limit: 100 },
    });
    // Another tenant's site is not found.
    await expectStatus(call(s, 'GET', `/api/v1/sites/${site}/source/deploy-key-removals`, { token: s.otherTenantToken }), 404);
    expect(await removals(site)).toMatchObject([
      {
        provider: c.provider,
        repository: repo(4),
        provider_key_id: record.deploy_key_registration.provider_key_id,
        cause: 'unbound',
        outcome: 'removed',
        detail: null,
      },
    ]);
  });

  it('re-binding to another repository, or to token access, removes the key registered before', async () => {
    const site = await newSite();
    const first = await bind(site, 5);
    const second = await bind(site, 6);
    expect(second.deploy_public_key).not.toBe(first.deploy_public_key);
    expect(keysAt(5)).toEqual([]);
    expect(keysAt(6).map((k) => k.key)).toEqual([second.deploy_public_key]);
    const token = await bind(site, 6, {});
    expect(token).toMatchObject({ auth: 'token', deploy_public_key: null, deploy_key_registration: null });
    expect(keysAt(6)).toEqual([]);
    expect((await removals(site)).map((r) => `${r.repository}:${r.cause}:${r.outcome}`)).toEqual([
      `${repo(5)}:rebound:removed`,
      `${repo(6)}:rebound:removed`,
    ]);
  });

  it('a removal the provider refuses does not stop the unbinding; it is recorded with what to do', async () => {
    const site = await newSite();
    const record = await bind(site, 7);
    fixture.keyAdmin = false;
    try {
      await expectStatus(call(s, 'PUT', `/api/v1/sites/${site}/source`, { payload: null }), 204);
    } finally {
      fixture.keyAdmin = true;
    }
    await expectStatus(call(s, 'GET', `/api/v1/sites/${site}/source`), 404);
    expect(keysAt(7)).toHaveLength(1);
    const [removal] = await removals(site);
    expect(removal).toMatchObject({ cause: 'unbound', outcome: 'failed' });
    expect(removal?.detail).toContain(`remove deploy key ${record.deploy_key_registration.provider_key_id}`);
    expect(removal?.detail).not.toContain(fixture.token);
    const listed = (await expectStatus(call(s, 'GET', `/api/v1/sites/${site}/source/deploy-key-removals`), 200)).json();
    expect(listed.data.map((r: { outcome: string }) => r.outcome)).toEqual(['failed']);
  });

  it('a repository the provider hides from the token (404, as GitHub answers without admin): not registered either', async () => {
    const site = await newSite();
    fixture.keyAdmin = 'hidden';
    try {
      const record = await bind(site, 10);
      expect(record.deploy_key_registration).toMatchObject({
        status: 'not_registered',
        reason: expect.stringMatching(/404.*by hand/),
      });
    } finally {
      fixture.keyAdmin = true;
    }
  });

  it('deleting the site removes its key at the provider, after the server’s cleanup', async () => {
    const site = await newSite();
    await bind(site, 8);
    expect(keysAt(8)).toHaveLength(1);
    const deleting = (await expectStatus(call(s, 'DELETE', `/api/v1/sites/${site}`), 202)).json();
    await waitForStatus(s, site, ['gone', 'deleted'], 20_000);
    expect(keysAt(8)).toEqual([]);
    expect((await removals(site)).map((r) => `${r.cause}:${r.outcome}`)).toEqual(['site_deleted:removed']);
    const op = (await expectStatus(call(s, 'GET', `/api/v1/operations/${deleting.operation.uuid}`), 200)).json();
    // After the server's cleanup (the TLS module's own last step may follow it).
    const names = op.steps.map((step: { name: string }) => step.name);
    expect(names.indexOf('remove deploy key at provider')).toBe(names.indexOf('remove what the ledger lists') + 1);
    expect(op.steps.find((step: { name: string }) => step.name === 'remove deploy key at provider')?.status).toBe('succeeded');
    expect(op.logs.map((l: { line: string }) => l.line).join('\n')).toContain(`deploy key removed at ${c.provider} ${repo(8)}`);
  });

  it('a site without a registered key is deleted without that step', async () => {
    const site = await newSite();
    await bind(site, 9, {});
    const deleting = (await expectStatus(call(s, 'DELETE', `/api/v1/sites/${site}`), 202)).json();
    await waitForStatus(s, site, ['gone', 'deleted'], 20_000);
    const op = (await expectStatus(call(s, 'GET', `/api/v1/operations/${deleting.operation.uuid}`), 200)).json();
    expect(op.steps.map((step: { name: string }) => step.name)).not.toContain('remove deploy key at provider');
    expect(await removals(site)).toEqual([]);
  });

  it('any other failure at the provider fails the PUT (502) and changes nothing, the earlier binding kept', async () => {
    const site = await newSite();
    const before = await bind(site, 11, {});
    fixture.keyEndpointsDown = true;
    try {
      const res = await expectStatus(
        put(site, { vcProfile: profile, repository: repo(11), branch: 'develop', access: 'deploy_key' }),
        502,
      );
      expect(res.json().code).toBe('provider_error');
      expect(res.body).not.toContain(fixture.token);
    } finally {
      fixture.keyEndpointsDown = false;
    }
    expect((await expectStatus(call(s, 'GET', `/api/v1/sites/${site}/source`), 200)).json()).toEqual(before);
    expect(keysAt(11)).toEqual([]);
  });

  it('through SiteplaneClient: bind with a deploy key, unbind, list the removal', async () => {
    const fetchViaInject: typeof fetch = async (input, init) => {
      const url = new URL(String(input));
      const res = await s.app.inject({
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
    const client = new SiteplaneClient({ baseUrl: 'http://siteplane.test', token: s.token, fetch: fetchViaInject });
    const site = await newSite();
    const source = await client.setSiteSource(site, {
      vcProfile: profile,
      repository: repo(12),
      branch: 'main',
      access: 'deploy_key',
    });
    expect(source?.deploy_key_registration).toMatchObject({ status: 'registered' });
    await client.unbindSiteSource(site);
    expect((await client.listDeployKeyRemovals(site)).map((r) => r.outcome)).toEqual(['removed']);
  });

  it('access is refused for a plain git profile and must be token or deploy_key', async () => {
    const site = await newSite();
    const git = (
      await createProfile(s, {
        provider: 'git',
        name: `plain-${c.provider}`,
        repositories: ['git@git.example.net:acme/shop.git'],
      })
    ).uuid;
    expect(
      fieldsOf(
        await expectStatus(put(site, { vcProfile: git, repository: 'acme/shop', branch: 'main', access: 'deploy_key' }), 422),
      ),
    ).toEqual(['access:not_applicable']);
    expect(
      fieldsOf(await expectStatus(put(site, { vcProfile: profile, repository: repo(1), branch: 'main', access: 'ssh' }), 422)),
    ).toEqual(['access:invalid_value']);
    await expectStatus(call(s, 'GET', `/api/v1/sites/${site}/source`), 404);
  });
});
