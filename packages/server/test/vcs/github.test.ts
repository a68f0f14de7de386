/** GitHub provider against a stand-in of GitHub Enterprise Server's REST API v3 (spec §4.2). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVcsProvider } from '../../src/vcs/create-vcs-provider.js';
import { githubApiBase } from '../../src/vcs/github.js';
import { makeFixture } from '../standins/vcs/fixture.js';
import { type GitHubStandin, startGitHubStandin } from '../standins/vcs/github-standin.js';
import { closedPort } from '../standins/vcs/standin-server.js';
import { vcsContract } from './contract.js';
import { hostedHarness } from './hosted-harness.js';

const fixture = makeFixture();
let standin: GitHubStandin;
let port: number;

beforeAll(async () => {
  standin = await startGitHubStandin(fixture);
  port = await closedPort();
});
afterAll(() => standin.server.close());

describe('GitHub provider (stand-in of REST API v3, Enterprise layout)', () => {
  vcsContract(
    () => hostedHarness({ provider: 'github', fixture, standin, closedPort: port, conditional: true, rateLimitSaysWhen: true }),
    { hosted: true },
  );

  it('sends the documented headers to <base>/api/v3, asking 100 items a page', async () => {
    const before = standin.server.requests.length;
    const provider = createVcsProvider({ provider: 'github', baseUrl: standin.baseUrl, token: fixture.token, repositories: [] });
    await provider.listRepositories();
    const requests = standin.server.requests.slice(before);
    expect(requests.map((r) => r.url)).toEqual([
      '/api/v3/user/repos?per_page=100&sort=full_name',
      '/api/v3/user/repos?per_page=100&sort=full_name&page=2',
      '/api/v3/user/repos?per_page=100&sort=full_name&page=3',
    ]);
    for (const request of requests) {
      expect(request.headers).toMatchObject({
        authorization: `Bearer ${fixture.token}`,
        accept: 'application/vnd.github+json',
        'x-github-api-version': '2022-11-28',
      });
    }
  });

  it('resolves github.com to api.github.com and an Enterprise web address to /api/v3', () => {
    expect(githubApiBase(null)).toBe('https://api.github.com');
    expect(githubApiBase('https://github.com')).toBe('https://api.github.com');
    expect(githubApiBase('https://ghe.example.com/')).toBe('https://ghe.example.com/api/v3');
    expect(githubApiBase('https://ghe.example.com/api/v3')).toBe('https://ghe.example.com/api/v3');
  });
});
