/** Gitea/Forgejo provider against a stand-in of API v1 (spec §4.2). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVcsProvider } from '../../src/vcs/create-vcs-provider.js';
import { giteaApiBase } from '../../src/vcs/gitea.js';
import { makeFixture } from '../standins/vcs/fixture.js';
import { type GiteaStandin, startGiteaStandin } from '../standins/vcs/gitea-standin.js';
import { closedPort } from '../standins/vcs/standin-server.js';
import { vcsContract } from './contract.js';
import { hostedHarness } from './hosted-harness.js';

const fixture = makeFixture();
let standin: GiteaStandin;
let port: number;

beforeAll(async () => {
  standin = await startGiteaStandin(fixture);
  port = await closedPort();
});
afterAll(() => standin.server.close());

describe('Gitea/Forgejo provider (stand-in of API v1)', () => {
  // Gitea's JSON API sends no ETag: the contract checks the TTL cache and a plain refetch instead.
  vcsContract(
    () => hostedHarness({ provider: 'gitea', fixture, standin, closedPort: port, conditional: false, rateLimitSaysWhen: true }),
    { hosted: true },
  );

  it('sends `Authorization: token …` and pages 50 at a time by the Link header', async () => {
    const before = standin.server.requests.length;
    await createVcsProvider({
      provider: 'gitea',
      baseUrl: standin.baseUrl,
      token: fixture.token,
      repositories: [],
    }).listRepositories();
    const requests = standin.server.requests.slice(before);
    expect(requests.map((r) => r.url)).toEqual([1, 2, 3, 4, 5].map((page) => `/api/v1/user/repos?limit=50&page=${page}`));
    for (const request of requests) {
      expect(request.headers.authorization).toBe(`token ${fixture.token}`);
      expect(request.ifNoneMatch).toBeNull();
    }
  });

  it('appends /api/v1 to the server address', () => {
    expect(giteaApiBase('https://codeberg.org')).toBe('https://codeberg.org/api/v1');
    expect(giteaApiBase('https://git.example.org/gitea/')).toBe('https://git.example.org/gitea/api/v1');
  });
});
