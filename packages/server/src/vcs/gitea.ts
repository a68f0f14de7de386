/**
 * Gitea and Forgejo (same API) through `/api/v1` with `Authorization: token …`: `GET /user`,
 * `GET /user/repos` (repositories the user owns or collaborates on, including organisations'),
 * `GET /repos/{owner}/{repo}` and its `/branches`. Pages follow the `Link` header; 50 items a page,
 * the servers' default MAX_RESPONSE_ITEMS. Their JSON API sends no ETag, so only the time-bounded
 * cache saves requests here.
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

const NAME = 'Gitea';

/** Gitea has no single home; gitea.com is used when a profile names no server. */
export function giteaApiBase(baseUrl: string | null): string {
  const root = (baseUrl ?? 'https://gitea.com').replace(/\/+$/, '');
  return root.endsWith('/api/v1') ? root : `${root}/api/v1`;
}

export class GiteaProvider implements VcsProvider {
  private readonly client: JsonClient;

  constructor(config: VcsProfileConfig, options: VcsProviderOptions = {}) {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (config.token) headers.Authorization = `token ${config.token}`;
    this.client = providerClient(options, {
      provider: NAME,
      baseUrl: giteaApiBase(config.baseUrl),
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
      'user/repos?limit=50&page=1',
      (body) => asArray(NAME, body, 'a repository page'),
      next,
    );
    return repos.map(summary);
  }

  async getRepository(name: string): Promise<RepositoryDetail> {
    const path = `repos/${encodeSegments(splitRepoName(NAME, name, { min: 2, max: 2 }))}`;
    const [repo, branches] = await Promise.all([
      this.client.get(path),
      this.client.getAll(`${path}/branches?limit=50&page=1`, (body) => asArray(NAME, body, 'a branch page'), next),
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
  return { name: requiredText(NAME, value, 'a branch', 'name'), commit: text(value, 'commit', 'id') };
}
