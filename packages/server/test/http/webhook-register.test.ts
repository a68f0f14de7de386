// Issue 11 item 6: "Registering the webhook at the provider through its API where the profile's
// token allows" — the real VC code against each provider's stand-in (its create-hook endpoint as
// documented), then a push signed the way that provider signs, with the secret it was given.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullName, makeFixture } from '../standins/vcs/fixture.js';
import type { HookFixture } from '../standins/vcs/hook-endpoints.js';
import { LOOPBACK_TARGETS, startTestService, TEST_DB, type TestService } from '../support/test-service.js';
import { HOOK_CASES } from '../webhooks/hook-cases.js';
import { RecordingTrigger } from '../webhooks/recording-trigger.js';
import { auth, configure, createSite, sendHook } from '../webhooks/webhook-api.js';
import { createProfile, HOSTED_CASES, type HostedStandin } from './vc-api.js';

describe.each(HOSTED_CASES)(`registering the hook at $provider (${TEST_DB})`, (c) => {
  let fixture: HookFixture;
  let standin: HostedStandin;
  let s: TestService;
  let profile: string;
  const trigger = new RecordingTrigger();
  const hookCase = HOOK_CASES.find((h) => h.provider === c.provider);

  beforeAll(async () => {
    fixture = makeFixture({ nested: c.nested });
    standin = await c.start(fixture);
    s = await startTestService({ env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS }, deploymentTrigger: trigger });
    profile = (await createProfile(s, { provider: c.provider, name: 'main', token: fixture.token, baseUrl: standin.baseUrl }))
      .uuid;
  });
  afterAll(async () => {
    await s?.stop();
    await standin?.server.close();
  });

  it('POST …/webhook with register creates the hook at the provider; its pushes then deploy', async () => {
    const site = await createSite(s, `${c.provider}.register.example.com`);
    const repository = fullName(fixture.repos[1] ?? fixture.big);
    const res = await configure(s, site, { branches: [], register: { vcProfile: profile, repository } });
    expect(res.statusCode).toBe(201);
    const record = res.json();
    expect(record.registered).toEqual({ provider: c.provider, repository, hook_id: expect.any(String) });
    expect(fixture.hooks).toEqual([
      {
        provider: c.provider,
        repository,
        id: record.registered.hook_id,
        url: record.urls[c.provider],
        secret: record.secret,
        events: c.provider === 'bitbucket' ? ['repo:push'] : ['push'],
        sent: expect.any(Object),
      },
    ]);
    // The token went in the provider's auth header, never in the body; TLS verification stays on.
    const post = standin.server.requests.find((r) => r.method === 'POST');
    expect(post?.body).not.toContain(fixture.token);
    expect(post?.body).not.toMatch(/"insecure_ssl":"1"|"enable_ssl_verification":false/);
    // Kept with the webhook, and shown by GET.
    const got = await s.app.inject({ method: 'GET', url: `/api/v1/sites/${site}/webhook`, headers: auth(s.token) });
    expect(got.json().registered).toEqual(record.registered);

    // The provider now delivers a push, signed with the secret it was given.
    if (!hookCase) throw new Error('no hook case');
    const body = JSON.stringify(hookCase.payload);
    const hook = await sendHook(
      s,
      new URL(record.urls[c.provider]).pathname,
      body,
      hookCase.headers(body, record.secret, randomUUID()),
    );
    expect(hook.statusCode).toBe(202);
    expect(trigger.pushes).toHaveLength(1);
  });

  it('a repository the provider does not have: 404 repository_not_found, and no webhook is configured', async () => {
    const site = await createSite(s, `${c.provider}.missing.example.com`);
    const res = await configure(s, site, { register: { vcProfile: profile, repository: 'acme/no-such-repo' } });
    expect({ status: res.statusCode, code: res.json().code }).toEqual({ status: 404, code: 'repository_not_found' });
    expect(res.body).not.toContain(fixture.token);
    const got = await s.app.inject({ method: 'GET', url: `/api/v1/sites/${site}/webhook`, headers: auth(s.token) });
    expect(got.json().enabled).toBe(false);
  });

  it('a token the provider no longer accepts: 424 provider_auth_failed, the token not in the answer', async () => {
    const site = await createSite(s, `${c.provider}.revoked.example.com`);
    const token = fixture.token;
    fixture.token = 'revoked-at-the-provider';
    try {
      const res = await configure(s, site, {
        register: { vcProfile: profile, repository: fullName(fixture.repos[2] ?? fixture.big) },
      });
      expect({ status: res.statusCode, code: res.json().code }).toEqual({ status: 424, code: 'provider_auth_failed' });
      expect(res.body).not.toContain(token);
    } finally {
      fixture.token = token;
    }
  });

  it('an unknown profile, or another tenant’s, is a 422 on register.vcProfile', async () => {
    const site = await createSite(s, `${c.provider}.noprofile.example.com`);
    const theirs = (
      await createProfile(
        s,
        { provider: c.provider, name: 'theirs', token: fixture.token, baseUrl: standin.baseUrl },
        s.otherTenantToken,
      )
    ).uuid;
    for (const vcProfile of [randomUUID(), theirs]) {
      const res = await configure(s, site, { register: { vcProfile, repository: 'acme/service-001' } });
      expect(res.statusCode).toBe(422);
      expect(res.json().errors).toEqual([{ field: 'register.vcProfile', code: 'not_found', message: expect.any(String) }]);
    }
  });
});
