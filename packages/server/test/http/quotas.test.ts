import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../src/storage/tokens.js';
import { makeFixture } from '../standins/vcs/fixture.js';
import { startGitHubStandin } from '../standins/vcs/github-standin.js';
import { LOOPBACK_TARGETS, seedServer, startTestService, TEST_DB, type TestService } from '../support/test-service.js';
import { call } from './vc-api.js';

describe(`per-team quotas on ${TEST_DB} (SITEPLANE_QUOTA_SERVERS, _SITES, _PROFILES)`, () => {
  let s: TestService;
  let github: Awaited<ReturnType<typeof startGitHubStandin>>;
  const fixture = makeFixture();
  beforeAll(async () => {
    github = await startGitHubStandin(fixture);
    s = await startTestService({
      env: {
        SITEPLANE_QUOTA_SERVERS: '2',
        SITEPLANE_QUOTA_SITES: '2',
        SITEPLANE_QUOTA_PROFILES: '2',
        SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS,
      },
    });
  });
  afterAll(async () => {
    await s?.stop();
    await github?.server.close();
  });

  const expectQuota = (res: Awaited<ReturnType<typeof call>>, setting: string) => {
    expect(res.statusCode, res.body).toBe(422);
    expect(res.headers['content-type']).toContain('application/problem+json');
    expect(res.json()).toMatchObject({ status: 422, code: 'quota_exceeded' });
    expect(res.json().detail).toContain(setting);
  };
  const server = (name: string, token?: string) =>
    call(s, 'POST', '/api/v1/servers', { payload: { name, ip: '127.0.0.1', connection: 'dry-run' }, token });

  it('servers: the third of a team is refused; a deleted one frees its place; another team has its own', async () => {
    const first = await server('a');
    expect((await server('b')).statusCode).toBe(201);
    expectQuota(await server('c'), 'SITEPLANE_QUOTA_SERVERS');
    expect((await call(s, 'DELETE', `/api/v1/servers/${first.json().uuid}`)).statusCode).toBeLessThan(300);
    expect((await server('c')).statusCode).toBe(201);
    expect((await server('x', s.otherTenantToken)).statusCode).toBe(201);
  });

  it('sites: the third live site of a team is refused', async () => {
    const other = await createToken(s.storage.db, { name: 'sites', scope: 'write', account: 'sites-tenant' });
    const ids = await seedServer(s, {}, other.token);
    const site = (domain: string) =>
      call(s, 'POST', '/api/v1/sites', {
        payload: { ...ids, type: 'static-html', domain, ssl: false, options: {} },
        token: other.token,
      });
    const first = await site('one.example.com');
    expect(first.statusCode, first.body).toBe(202);
    expect((await site('two.example.com')).statusCode).toBe(202);
    expectQuota(await site('three.example.com'), 'SITEPLANE_QUOTA_SITES');
  });

  it('profiles: DNS and VC profiles count together', async () => {
    const other = await createToken(s.storage.db, { name: 'profiles', scope: 'write', account: 'profiles-tenant' });
    const dns = (name: string) =>
      call(s, 'POST', '/api/v1/dns-profiles', {
        payload: { provider: 'cloudflare', name, credentials: { apiToken: 'cf-token' } },
        token: other.token,
      });
    expect((await dns('one')).statusCode).toBe(201);
    const vc = (name: string) =>
      call(s, 'POST', '/api/v1/vc-profiles', {
        payload: { provider: 'github', name, token: fixture.token, baseUrl: github.baseUrl },
        token: other.token,
      });
    const created = await vc('gh');
    expect(created.statusCode, created.body).toBe(201);
    expectQuota(await dns('two'), 'SITEPLANE_QUOTA_PROFILES');
    expectQuota(await vc('gh2'), 'SITEPLANE_QUOTA_PROFILES');
    expect(
      (await call(s, 'DELETE', `/api/v1/vc-profiles/${created.json().uuid}`, { token: other.token })).statusCode,
    ).toBeLessThan(300);
    expect((await dns('two')).statusCode).toBe(201);
  });

  it('0 means no quota', async () => {
    const t = await startTestService({ env: { SITEPLANE_QUOTA_SERVERS: '0' } });
    try {
      for (let i = 0; i < 5; i++) {
        const res = await call(t, 'POST', '/api/v1/servers', {
          payload: { name: `s${i}`, ip: '127.0.0.1', connection: 'dry-run' },
        });
        expect(res.statusCode).toBe(201);
      }
    } finally {
      await t.stop();
    }
  });
});
