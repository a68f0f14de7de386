/**
 * GitHub and GitHub Enterprise Server through REST API v3: `GET /user`, `GET /user/repos`
 * (owned, collaborator and organisation repositories), `GET /repos/{owner}/{repo}` and
 * `GET /repos/{owner}/{repo}/branches`, 100 per page, pages followed through the `Link` header.
 */
import { type JsonClient, type JsonPage, providerClient } from './json-client.js';
import { asArray, asObject, flag, requiredText, text } from './json-shape.js';
import { linkRel } from './link-header.js';
import type {
  Branch,
  RepositoryDetail,
  RepositorySummary,
  VcsProfileConfig,
  VcsProvider,
  VcsProviderOptions,
} from './provider.js';
import { encodeSegments, splitRepoName } from './repo-name.js';

const NAME = 'GitHub';
export const GITHUB_API_VERSION = '2022-11-28';

/** github.com's API, or `<base>/api/v3` for an Enterprise Server given by its web address. */
export function githubApiBase(baseUrl: string | null): string {
  if (!baseUrl) return 'https://api.github.com';
  const url = new URL(baseUrl);
  if (['github.com', 'www.github.com', 'api.github.com'].includes(url.hostname)) return 'https://api.github.com';
  const path = url.pathname.replace(/\/+$/, '');
  return path.endsWith('/api/v3') ? url.origin + path : `${url.origin}${path}/api/v3`;
}

export class GitHubProvider implements VcsProvider {
  private readonly client: JsonClient;

  constructor(config: VcsProfileConfig, options: VcsProviderOptions = {}) {
    const headers: Record<string, string> = {
      Accept: 'application/vnd.github+json',
      'X-GitHub-Api-Version': GITHUB_API_VERSION,
      'User-Agent': 'Siteplane', // GitHub refuses requests without one
    };
    if (config.token) headers.Authorization = `Bearer ${config.token}`;
    this.client = providerClient(options, {
      provider: NAME,
      baseUrl: githubApiBase(config.baseUrl),
      headers,
      secrets: config.token ? [config.token] : [],
    });
  }

  async whoami(): Promise<{ account: string | null }> {
    const page = await this.client.get('user', { revalidate: true });
    return { account: requiredText(NAME, page.body, 'the user', 'login') };
  }

  async listRepositories(): Promise<RepositorySummary[]> {
    const repos = await this.client.getAll(
      'user/repos?per_page=100&sort=full_name',
      (body) => asArray(NAME, body, 'a repository page'),
      next,
    );
    return repos.map(summary);
  }

  async getRepository(name: string): Promise<RepositoryDetail> {
    const path = `repos/${encodeSegments(splitRepoName(NAME, name, { min: 2, max: 2 }))}`;
    const [repo, branches] = await Promise.all([
      this.client.get(path),
      this.client.getAll(`${path}/branches?per_page=100`, (body) => asArray(NAME, body, 'a branch page'), next),
    ]);
    return { ...summary(repo.body), branches: branches.map(branch), ssh_url: text(repo.body, 'ssh_url') };
  }
}

function next(page: JsonPage): string | null {
  return linkRel(page.headers.link, 'next');
}

function summary(value: unknown): RepositorySummary {
  const repo = asObject(NAME, value, 'a repository');
  return {
    name: requiredText(NAME, repo, 'a repository', 'full_name'),
    default_branch: text(repo, 'default_branch'),
    private: flag(repo, 'private'),
    web_url: text(repo, 'html_url'),
  };
}

function branch(value: unknown): Branch {
  return { name: requiredText(NAME, value, 'a branch', 'name'), commit: text(value, 'commit', 'sha') };
}
