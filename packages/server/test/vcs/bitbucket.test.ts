/** Bitbucket Cloud provider against a stand-in of REST API 2.0 (spec §4.2). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bitbucketApiBase } from '../../src/vcs/bitbucket.js';
import { createVcsProvider } from '../../src/vcs/create-vcs-provider.js';
import { type BitbucketStandin, startBitbucketStandin } from '../standins/vcs/bitbucket-standin.js';
import { makeFixture } from '../standins/vcs/fixture.js';
import { closedPort } from '../standins/vcs/standin-server.js';
import { expectKind, vcsContract } from './contract.js';
import { hostedHarness } from './hosted-harness.js';

const fixture = makeFixture();
let standin: BitbucketStandin;
let port: number;

beforeAll(async () => {
  standin = await startBitbucketStandin(fixture);
  port = await closedPort();
});
afterAll(() => standin.server.close());

describe('Bitbucket Cloud provider (stand-in of REST API 2.0)', () => {
  vcsContract(
    () =>
      hostedHarness({ provider: 'bitbucket', fixture, standin, closedPort: port, conditional: true, rateLimitSaysWhen: false }),
    { hosted: true },
  );

  it('lists repositories workspace by workspace, following `next` in the body', async () => {
    const before = standin.server.requests.length;
    await createVcsProvider({
      provider: 'bitbucket',
      baseUrl: standin.baseUrl,
      token: fixture.token,
      repositories: [],
    }).listRepositories();
    const urls = standin.server.requests.slice(before).map((r) => r.url);
    expect(urls[0]).toBe('/2.0/user/workspaces?pagelen=100');
    // Workspaces are listed concurrently, so their requests may arrive in either order.
    expect(urls.slice(1).sort()).toEqual(
      [
        '/2.0/repositories/acme?pagelen=100',
        '/2.0/repositories/octo-org?pagelen=100',
        '/2.0/repositories/acme?pagelen=100&page=2',
        '/2.0/repositories/octo-org?pagelen=100&page=2',
      ].sort(),
    );
  });

  it('authenticates an app password as HTTP Basic `username:password`', async () => {
    const appPassword = `${fixture.login}:${fixture.token}`;
    const before = standin.server.requests.length;
    const provider = createVcsProvider({ provider: 'bitbucket', baseUrl: standin.baseUrl, token: appPassword, repositories: [] });
    expect(await provider.whoami()).toEqual({ account: fixture.login });
    expect(standin.server.requests[before]?.headers.authorization).toBe(`Basic ${Buffer.from(appPassword).toString('base64')}`);

    const wrong = createVcsProvider({
      provider: 'bitbucket',
      baseUrl: standin.baseUrl,
      token: `${fixture.login}:nope-nope-nope`,
      repositories: [],
    });
    await expectKind(wrong.listRepositories(), 'auth_failed', [
      'nope-nope-nope',
      Buffer.from(`${fixture.login}:nope-nope-nope`).toString('base64'),
    ]);
  });

  it('uses api.bitbucket.org/2.0 for Bitbucket Cloud', () => {
    expect(bitbucketApiBase(null)).toBe('https://api.bitbucket.org/2.0');
    expect(bitbucketApiBase('https://bitbucket.org')).toBe('https://api.bitbucket.org/2.0');
    expect(bitbucketApiBase('http://127.0.0.1:9999')).toBe('http://127.0.0.1:9999/2.0');
  });
});
