/** GitLab provider against a stand-in of GitLab's REST API v4, nested subgroups included (spec §4.2). */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createVcsProvider } from '../../src/vcs/create-vcs-provider.js';
import { gitlabApiBase } from '../../src/vcs/gitlab.js';
import { fullName, makeFixture } from '../standins/vcs/fixture.js';
import { type GitLabStandin, startGitLabStandin } from '../standins/vcs/gitlab-standin.js';
import { closedPort } from '../standins/vcs/standin-server.js';
import { vcsContract } from './contract.js';
import { hostedHarness } from './hosted-harness.js';

const fixture = makeFixture({ nested: true });
let standin: GitLabStandin;
let port: number;

beforeAll(async () => {
  standin = await startGitLabStandin(fixture);
  port = await closedPort();
});
afterAll(() => standin.server.close());

const provider = () =>
  createVcsProvider({ provider: 'gitlab', baseUrl: standin.baseUrl, token: fixture.token, repositories: [] });

describe('GitLab provider (stand-in of REST API v4)', () => {
  vcsContract(
    () => hostedHarness({ provider: 'gitlab', fixture, standin, closedPort: port, conditional: true, rateLimitSaysWhen: true }),
    { hosted: true },
  );

  it('lists member projects with PRIVATE-TOKEN, names being full paths through subgroups', async () => {
    const before = standin.server.requests.length;
    const names = (await provider().listRepositories()).map((r) => r.name);
    expect(names).toContain('acme/platform/infra/service-002');
    const requests = standin.server.requests.slice(before);
    expect(requests[0]?.url).toBe('/api/v4/projects?membership=true&per_page=100&order_by=id&sort=asc');
    expect(requests).toHaveLength(3);
    for (const request of requests) expect(request.headers['private-token']).toBe(fixture.token);
  });

  it('addresses a project by its URL-encoded path', async () => {
    const before = standin.server.requests.length;
    const repo = await provider().getRepository(fullName(fixture.big));
    expect(repo.name).toBe('acme/platform/monorepo');
    const urls = standin.server.requests.slice(before).map((r) => r.url);
    expect(urls).toContain('/api/v4/projects/acme%2Fplatform%2Fmonorepo');
    expect(urls).toContain('/api/v4/projects/acme%2Fplatform%2Fmonorepo/repository/branches?per_page=100');
  });

  it('pages by X-Next-Page when a proxy dropped the Link header', async () => {
    const bare = await startGitLabStandin(fixture, { omitLinkHeader: true });
    try {
      const repos = await createVcsProvider({
        provider: 'gitlab',
        baseUrl: bare.baseUrl,
        token: fixture.token,
        repositories: [],
      }).listRepositories();
      expect(repos).toHaveLength(fixture.repos.length);
      expect(bare.server.requests.map((r) => r.url)).toContain(
        '/api/v4/projects?membership=true&per_page=100&order_by=id&sort=asc&page=3',
      );
    } finally {
      await bare.server.close();
    }
  });

  it('uses gitlab.com unless a self-managed base URL is given', () => {
    expect(gitlabApiBase(null)).toBe('https://gitlab.com/api/v4');
    expect(gitlabApiBase('https://git.example.org/')).toBe('https://git.example.org/api/v4');
    expect(gitlabApiBase('https://git.example.org/gitlab/api/v4')).toBe('https://git.example.org/gitlab/api/v4');
  });
});
