/**
 * Operator settings that keep tenants off the operator's own machine and network:
 * SITEPLANE_LOCAL_SERVER (a `local` server runs sites on Siteplane's machine, next to secret.key
 * and every tenant's sealed keys) and SITEPLANE_ALLOWED_TARGETS (the egress policy: servers,
 * VC providers' baseUrl, git remotes). Names resolve through the service's resolver seam.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createToken } from '../../src/storage/tokens.js';
import { makeFixture } from '../standins/vcs/fixture.js';
import { startGitHubStandin } from '../standins/vcs/github-standin.js';
import { closedPort } from '../standins/vcs/standin-server.js';
import { LOOPBACK_TARGETS, startTestService, TEST_DB, type TestService } from '../support/test-service.js';
import { call } from './vc-api.js';

type Errors = { field: string; code: string }[];
const fieldsOf = (body: { errors?: Errors }) => (body.errors ?? []).map(({ field, code }) => ({ field, code }));

/** Each name's answers in turn, the last repeating (a rebinding DNS server). */
const table: Record<string, string[][]> = {
  'metadata.attacker.test': [['93.184.215.14', '169.254.169.254']],
  'loopback.attacker.test': [['::1']],
  'rebind.attacker.test': [['10.20.30.40'], ['169.254.169.254']],
  'public.example.test': [['93.184.215.14']],
};
const resolveHost = async (host: string) => {
  const list = table[host];
  if (!list) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return (list.length > 1 ? list.shift() : list[0]) as string[];
};

describe(`connection "local" and SITEPLANE_LOCAL_SERVER on ${TEST_DB}`, () => {
  let s: TestService;
  let on: TestService;
  beforeAll(async () => {
    s = await startTestService();
    on = await startTestService({ env: { SITEPLANE_LOCAL_SERVER: 'on' } });
  });
  afterAll(async () => {
    await s?.stop();
    await on?.stop();
  });

  it('refuses a local server by default, with a global and with a team token: 422 on connection', async () => {
    const team = await createToken(s.storage.db, { name: 'team', scope: 'write', account: 'acme', team: 'web' });
    for (const token of [s.token, team.token]) {
      const res = await call(s, 'POST', '/api/v1/servers', {
        payload: { name: 'this machine', ip: '127.0.0.1', connection: 'local' },
        token,
      });
      expect(res.statusCode).toBe(422);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ code: 'validation_failed', status: 422 });
      expect(fieldsOf(res.json())).toEqual([{ field: 'connection', code: 'local_server_disabled' }]);
    }
    const listed = await call(s, 'GET', '/api/v1/servers');
    expect(listed.json().data).toEqual([]);
  });

  it('accepts a local server when the operator turned SITEPLANE_LOCAL_SERVER on', async () => {
    const res = await call(on, 'POST', '/api/v1/servers', {
      payload: { name: 'this machine', ip: '127.0.0.1', connection: 'local' },
    });
    expect(res.statusCode).toBe(201);
    expect(res.json()).toMatchObject({ connection: 'local' });
  });

  it('a local server registered while it was on runs nothing once it is off: verify is refused', async () => {
    // As if registered under SITEPLANE_LOCAL_SERVER=on, before the operator turned it off.
    const created = await call(s, 'POST', '/api/v1/servers', {
      payload: { name: 'was local', ip: '127.0.0.1', connection: 'dry-run' },
    });
    await s.storage.db.updateTable('servers').set({ connection: 'local' }).where('uuid', '=', created.json().uuid).execute();
    const verify = await call(s, 'POST', `/api/v1/servers/${created.json().uuid}/verify`);
    expect(verify.statusCode).toBe(422);
    expect(fieldsOf(verify.json())).toEqual([{ field: 'connection', code: 'local_server_disabled' }]);
  });
});

describe(`SITEPLANE_ALLOWED_TARGETS for servers and VC profiles on ${TEST_DB}`, () => {
  let s: TestService;
  let loopback: TestService;
  let github: Awaited<ReturnType<typeof startGitHubStandin>>;
  const fixture = makeFixture();
  beforeAll(async () => {
    s = await startTestService({ resolveHost });
    loopback = await startTestService({ env: { SITEPLANE_ALLOWED_TARGETS: LOOPBACK_TARGETS }, resolveHost });
    github = await startGitHubStandin(fixture);
  });
  afterAll(async () => {
    await s?.stop();
    await loopback?.stop();
    await github?.server.close();
  });

  const ssh = (ip: string, service = s) =>
    call(service, 'POST', '/api/v1/servers', { payload: { name: `web ${ip}`, ip, connection: 'ssh' } });

  it.each([
    ['169.254.169.254'],
    ['127.0.0.1'],
    ['::1'],
    ['0.0.0.0'],
    ['fe80::1'],
    ['224.0.0.1'],
    ['100.64.1.1'],
    ['metadata.attacker.test'], // one public and one link-local address
    ['loopback.attacker.test'],
  ])('refuses an ssh server at %s: 422 ip target_not_allowed', async (ip) => {
    const res = await ssh(ip);
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(fieldsOf(res.json())).toEqual([{ field: 'ip', code: 'target_not_allowed' }]);
    expect(res.body).not.toContain('93.184.215.14');
  });

  it('accepts public addresses, the default private ranges (the test hosts 10.231.N.2), and unresolved names', async () => {
    for (const ip of ['93.184.215.14', '10.231.3.2', '192.168.1.20', 'fd00::20', 'public.example.test', 'not-yet.example.test']) {
      expect((await ssh(ip)).statusCode, ip).toBe(201);
    }
    // Loopback once the operator lists it; dry-run servers never connect and are not checked.
    expect((await ssh('127.0.0.1', loopback)).statusCode).toBe(201);
    expect(
      (await call(s, 'POST', '/api/v1/servers', { payload: { name: 'dry', ip: '127.0.0.1', connection: 'dry-run' } })).statusCode,
    ).toBe(201);
  });

  it('checks again at verify: a name rebound to the metadata address since registration is refused before any connect', async () => {
    const created = await ssh('rebind.attacker.test');
    expect(created.statusCode).toBe(201);
    const verify = await call(s, 'POST', `/api/v1/servers/${created.json().uuid}/verify`);
    expect(verify.statusCode).toBe(422);
    expect(verify.json()).toMatchObject({ code: 'target_not_allowed' });
    expect(verify.json().detail).toContain('rebind.attacker.test resolves to a link-local address');
    expect(verify.body).not.toContain('169.254.169.254');
  });

  it('tells an unreachable server by a stable code, not with the socket’s message', async () => {
    const port = await closedPort();
    const created = await call(loopback, 'POST', '/api/v1/servers', {
      payload: { name: 'closed', ip: '127.0.0.1', connection: 'ssh', sshPort: port },
    });
    const verify = await call(loopback, 'POST', `/api/v1/servers/${created.json().uuid}/verify`);
    expect(verify.statusCode).toBe(502);
    expect(verify.json()).toMatchObject({ code: 'target_unreachable' });
    expect(verify.body).not.toMatch(/ECONNREFUSED|connect /);
  });

  it('refuses a VC profile whose baseUrl is not an allowed target: 422 baseUrl, nothing sent', async () => {
    const before = github.server.requests.length;
    const res = await call(s, 'POST', '/api/v1/vc-profiles', {
      payload: { provider: 'github', name: 'inside', token: fixture.token, baseUrl: github.baseUrl },
    });
    expect(res.statusCode).toBe(422);
    expect(fieldsOf(res.json())).toEqual([{ field: 'baseUrl', code: 'target_not_allowed' }]);
    expect(res.body).not.toContain(fixture.token);
    expect(github.server.requests.length).toBe(before);
    // The same stand-in with loopback listed: the profile works.
    const allowed = await call(loopback, 'POST', '/api/v1/vc-profiles', {
      payload: { provider: 'github', name: 'inside', token: fixture.token, baseUrl: github.baseUrl },
    });
    expect(allowed.statusCode, allowed.body).toBe(201);
  });

  it('refuses git remotes at forbidden addresses (each named), and file:// and transport helpers outright', async () => {
    const res = await call(s, 'POST', '/api/v1/vc-profiles', {
      payload: {
        provider: 'git',
        name: 'inside',
        repositories: [
          'git://127.0.0.1/acme/api.git',
          'https://metadata.attacker.test/acme/site.git',
          'ssh://git@[fe80::1]/acme/web.git',
        ],
      },
    });
    expect(res.statusCode).toBe(422);
    expect(fieldsOf(res.json())).toEqual([
      { field: 'repositories.0', code: 'target_not_allowed' },
      { field: 'repositories.1', code: 'target_not_allowed' },
      { field: 'repositories.2', code: 'target_not_allowed' },
    ]);
    const local = await call(s, 'POST', '/api/v1/vc-profiles', {
      payload: { provider: 'git', name: 'disk', repositories: ['file:///var/lib/siteplane/acme/api.git', 'fd::3/acme/site'] },
    });
    expect(local.statusCode).toBe(422);
    expect(fieldsOf(local.json())).toEqual([
      { field: 'repositories.0', code: 'invalid_format' },
      { field: 'repositories.1', code: 'invalid_format' },
    ]);
  });
});
