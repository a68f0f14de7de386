// SITEPLANE_PUBLIC_URL: behind a TLS-terminating proxy the API is reached over plain http, yet the
// hook URLs it shows and registers at providers must name the public https:// address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fullName, makeFixture } from '../standins/vcs/fixture.js';
import { type GitHubStandin, startGitHubStandin } from '../standins/vcs/github-standin.js';
import type { HookFixture } from '../standins/vcs/hook-endpoints.js';
import { LOOPBACK_TARGETS, startTestService, TEST_DB, type TestService } from '../support/test-service.js';
import { auth, configure, createSite } from '../webhooks/webhook-api.js';
import { createProfile } from './vc-api.js';

const PUBLIC = 'https://deploy.example.com/siteplane';

describe(`hook URLs with SITEPLANE_PUBLIC_URL (${TEST_DB})`, () => {
  let fixture: HookFixture;
  let github: GitHubStandin;
  let s: TestService;
  let plain: TestService;
  let proxied: TestService;

  beforeAll(async () => {
    fixture = makeFixture();
    github = await startGitHubStandin(fixture);
    s = await startTestService({ env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS, SITEPLANE_PUBLIC_URL: `${PUBLIC}/` } });
    plain = await startTestService({ env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS } });
    proxied = await startTestService({
      env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS, SITEPLANE_TRUSTED_PROXIES: '10.0.0.5' },
    });
  });
  afterAll(async () => {
    await s?.stop();
    await plain?.stop();
    await proxied?.stop();
    await github?.server.close();
  });

  it('shows every hook URL and the trigger URL under the public address, not the request’s', async () => {
    const site = await createSite(s, 'public-url.example.com');
    const res = await configure(s, site, {});
    expect(res.statusCode).toBe(201);
    const record = res.json();
    for (const provider of ['github', 'gitlab', 'bitbucket', 'gitea'])
      expect(record.urls[provider]).toBe(`${PUBLIC}/api/v1/hooks/${provider}/${site}`);
    expect(record.trigger_url).toMatch(new RegExp(`^${PUBLIC}/api/v1/hooks/sph_`));
    const got = await s.app.inject({
      method: 'GET',
      url: `/api/v1/sites/${site}/webhook`,
      headers: { ...auth(s.token), host: 'internal:8080' },
    });
    expect(got.json().urls.github).toBe(`${PUBLIC}/api/v1/hooks/github/${site}`);
  });

  it('registers the hook at the provider with the public https:// URL', async () => {
    const profile = (await createProfile(s, { provider: 'github', name: 'gh', token: fixture.token, baseUrl: github.baseUrl }))
      .uuid;
    const site = await createSite(s, 'public-register.example.com');
    const repository = fullName(fixture.repos[1] ?? fixture.big);
    const res = await configure(s, site, { register: { vcProfile: profile, repository } });
    expect(res.statusCode).toBe(201);
    expect(fixture.hooks?.at(-1)?.url).toBe(`${PUBLIC}/api/v1/hooks/github/${site}`);
  });

  it('without it, the URLs follow the scheme and host the request came to', async () => {
    const site = await createSite(plain, 'request-url.example.com');
    await configure(plain, site, {});
    const got = await plain.app.inject({
      method: 'GET',
      url: `/api/v1/sites/${site}/webhook`,
      headers: { ...auth(plain.token), host: 'internal:8080' },
    });
    expect(got.json().urls.github).toBe(`http://internal:8080/api/v1/hooks/github/${site}`);
  });

  it("behind a proxy in SITEPLANE_TRUSTED_PROXIES, its X-Forwarded-Proto and -Host; anyone else's are not believed", async () => {
    const forwarded = { 'x-forwarded-proto': 'https', 'x-forwarded-host': 'deploy.example.com' };
    const urlFrom = async (t: TestService, site: string, remoteAddress: string) =>
      (
        await t.app.inject({
          method: 'GET',
          url: `/api/v1/sites/${site}/webhook`,
          headers: { ...auth(t.token), host: 'internal:8080', ...forwarded },
          remoteAddress,
        })
      ).json().urls.github;
    const site = await createSite(proxied, 'proxied-url.example.com');
    await configure(proxied, site, {});
    expect(await urlFrom(proxied, site, '10.0.0.5')).toBe(`https://deploy.example.com/api/v1/hooks/github/${site}`);
    expect(await urlFrom(proxied, site, '10.0.0.6')).toBe(`http://internal:8080/api/v1/hooks/github/${site}`);
    const direct = await createSite(plain, 'unproxied-url.example.com');
    await configure(plain, direct, {});
    expect(await urlFrom(plain, direct, '10.0.0.5')).toBe(`http://internal:8080/api/v1/hooks/github/${direct}`);
  });
});
