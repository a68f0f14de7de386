/**
 * POST /api/v1/servers/<uuid>/users refuses accounts that must not own sites (ARCHITECTURE §2,
 * admin surface): root, the server's own SSH user and system accounts by name; on a verified
 * server also an existing account with a uid below 1000 or in sudo/wheel/adm/root, as the server
 * reports it. The server here is the in-memory Debian fake, reached through a stand-in of the
 * integrations that runs the real account probe on it.
 */
import type { Response } from 'light-my-request';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EMPTY_FACTS } from '../../src/domain/servers/facts.js';
import { readAccount } from '../../src/provisioning/read-account.js';
import type { Integrations } from '../../src/use-cases/integrations.js';
import { FakeServer } from '../provisioning/support/fake-server.js';
import { startTestService, TEST_DB, type TestService } from '../support/test-service.js';

const host = new FakeServer();
host.addAccount('ops', 1000, ['sudo']);
host.addAccount('logreader', 1003, ['adm']);
host.addAccount('backupsvc', 997, []);
host.addAccount('alice', 1004, ['developers']);

const standin: Integrations = {
  inspectServer: async () => ({ hostKeySha256: 'SHA256:standin', facts: { ...EMPTY_FACTS, os: 'Debian 12' } }),
  inspectAccount: (_server, username) => readAccount(host.exec, username),
  dnsProvider: () => {
    throw new Error('no DNS in this suite');
  },
  vcsProvider: () => {
    throw new Error('no VCS in this suite');
  },
};

describe(`server users: privileged accounts are refused, on ${TEST_DB}`, () => {
  let s: TestService;
  const post = (url: string, payload?: object): Promise<Response> =>
    s.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${s.token}` }, payload });
  const addUser = (server: string, username: string) => post(`/api/v1/servers/${server}/users`, { username });
  const refusal = (res: Response) => {
    expect(res.statusCode, res.body).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    return res.json().errors.map((e: { field: string; code: string }) => `${e.field} ${e.code}`);
  };

  beforeAll(async () => {
    s = await startTestService({ integrations: standin });
  });
  afterAll(async () => {
    await s?.stop();
  });

  it('refuses root, the SSH user and system account names at once on a dry-run server', async () => {
    const res = await post('/api/v1/servers', { name: 'dry', ip: '10.0.0.4', connection: 'dry-run', sshUser: 'admin' });
    expect(res.statusCode, res.body).toBe(201);
    const server = res.json().uuid as string;
    for (const username of ['root', 'admin', 'www-data', 'nobody', 'daemon', 'bin', 'sys', 'postgres', 'mysql']) {
      expect(refusal(await addUser(server, username)), username).toEqual(['username privileged_user']);
    }
    expect((await addUser(server, 'deploy')).statusCode).toBe(201);
  });

  it('asks a verified server about an existing account: sudo, adm and system uids are refused', async () => {
    const res = await post('/api/v1/servers', { name: 'ssh', ip: '10.0.0.5', connection: 'ssh', sshUser: 'root' });
    expect(res.statusCode, res.body).toBe(201);
    const server = res.json().uuid as string;
    expect((await post(`/api/v1/servers/${server}/verify`)).statusCode).toBe(200);

    const sudo = await addUser(server, 'ops');
    expect(refusal(sudo)).toEqual(['username privileged_user']);
    expect(sudo.json().errors[0].message).toContain('sudo');
    expect(refusal(await addUser(server, 'logreader'))).toEqual(['username privileged_user']);
    expect(refusal(await addUser(server, 'backupsvc'))).toEqual(['username privileged_user']);
    expect(refusal(await addUser(server, 'root'))).toEqual(['username privileged_user']);

    // An ordinary existing account, and a new one (created unprivileged by the first site).
    expect((await addUser(server, 'alice')).statusCode).toBe(201);
    expect((await addUser(server, 'newbie')).statusCode).toBe(201);
    const list = await s.app.inject({
      method: 'GET',
      url: `/api/v1/servers/${server}/users`,
      headers: { authorization: `Bearer ${s.token}` },
    });
    expect(list.json().data.map((u: { username: string }) => u.username)).toEqual(['alice', 'newbie']);
  });
});
