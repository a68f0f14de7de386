/**
 * GitLab (gitlab.com or self-managed) through REST API v4 with a personal, group or project access
 * token in `PRIVATE-TOKEN`. Lists the projects the token's user is a member of
 * (`GET /projects?membership=true`), including those in nested subgroups, whose names are their
 * full paths (`group/sub/project`). A project is addressed by its URL-encoded path
 * (`/projects/group%2Fsub%2Fproject`). Pages: the `Link` header's next, else `X-Next-Page`.
 */
import { type JsonClient, type JsonPage, providerClient } from './json-client.js';
import { asArray, asObject, requiredText, text } from './json-shape.js';
import { linkRel } from './link-header.js';
import type {
  Branch,
  RepositoryDetail,
  RepositorySummary,
  VcsProfileConfig,
  VcsProvider,
  VcsProviderOptions,
} from './provider.js';
import { splitRepoName } from './repo-name.js';

const NAME = 'GitLab';
/** GitLab nests groups at most 20 levels deep, plus the project itself. */
const MAX_DEPTH = 21;

export function gitlabApiBase(baseUrl: string | null): string {
  const root = (baseUrl ?? 'https://gitlab.com').replace(/\/+$/, '');
  return root.endsWith('/api/v4') ? root : `${root}/api/v4`;
}

export class GitLabProvider implements VcsProvider {
  private readonly client: JsonClient;

  constructor(config: VcsProfileConfig, options: VcsProviderOptions = {}) {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (config.token) headers['PRIVATE-TOKEN'] = config.token;
    this.client = providerClient(options, {
      provider: NAME,
      baseUrl: gitlabApiBase(config.baseUrl),
      headers,
      secrets: config.token ? [config.token] : [],
    });
  }

  async whoami(): Promise<{ account: string | null }> {
    const page = await this.client.get('user', { revalidate: true });
    return { account: requiredText(NAME, page.body, 'the user', 'username') };
  }

  async listRepositories(): Promise<RepositorySummary[]> {
    const projects = await this.client.getAll(
      'projects?membership=true&per_page=100&order_by=id&sort=asc',
      (body) => asArray(NAME, body, 'a project page'),
      next,
    );
    return projects.map(summary);
  }

  async getRepository(name: string): Promise<RepositoryDetail> {
    const id = encodeURIComponent(splitRepoName(NAME, name, { min: 2, max: MAX_DEPTH }).join('/'));
    const [project, branches] = await Promise.all([
      this.client.get(`projects/${id}`),
      this.client.getAll(`projects/${id}/repository/branches?per_page=100`, (body) => asArray(NAME, body, 'a branch page'), next),
    ]);
    return { ...summary(project.body), branches: branches.map(branch), ssh_url: text(project.body, 'ssh_url_to_repo') };
  }
}

/** The documented `Link` rel="next"; `X-Next-Page` (empty on the last page) when a proxy dropped it. */
function next(page: JsonPage): string | null {
  const link = linkRel(page.headers.link, 'next');
  if (link) return link;
  const nextPage = page.headers['x-next-page'];
  if (!nextPage) return null;
  const url = new URL(page.url);
  url.searchParams.set('page', nextPage);
  return url.href;
}

function summary(value: unknown): RepositorySummary {
  const project = asObject(NAME, value, 'a project');
  const visibility = text(project, 'visibility');
  return {
    name: requiredText(NAME, project, 'a project', 'path_with_namespace'),
    default_branch: text(project, 'default_branch'),
    // `internal` projects are visible to every signed-in user of the instance, not to the public.
    private: visibility === null ? null : visibility !== 'public',
    web_url: text(project, 'web_url'),
  };
}

function branch(value: unknown): Branch {
  return { name: requiredText(NAME, value, 'a branch', 'name'), commit: text(value, 'commit', 'id') };
}
