/**
 * Bitbucket Cloud through REST API 2.0. An access token goes in `Authorization: Bearer`; an app
 * password (or API token) is given as `username:secret` and sent as HTTP Basic. Since Atlassian
 * removed the cross-workspace `GET /2.0/repositories` (CHANGE-2770), repositories are listed per
 * workspace: `GET /user/workspaces`, then `GET /repositories/{workspace}` for each. Pages end when
 * the JSON body has no `next`.
 */
import { type JsonClient, type JsonPage, providerClient } from './json-client.js';
import { asArray, asObject, flag, requiredText, text } from './json-shape.js';
import type {
  Branch,
  RepositoryDetail,
  RepositorySummary,
  VcsProfileConfig,
  VcsProvider,
  VcsProviderOptions,
} from './provider.js';
import { encodeSegments, splitRepoName } from './repo-name.js';

const NAME = 'Bitbucket';
/** Workspaces listed at once; a few, so a member of many does not burst the hourly limit. */
const WORKSPACE_CONCURRENCY = 4;

export function bitbucketApiBase(baseUrl: string | null): string {
  if (!baseUrl) return 'https://api.bitbucket.org/2.0';
  const url = new URL(baseUrl);
  if (url.hostname === 'bitbucket.org' || url.hostname === 'api.bitbucket.org') return 'https://api.bitbucket.org/2.0';
  const root = `${url.origin}${url.pathname.replace(/\/+$/, '')}`;
  return root.endsWith('/2.0') ? root : `${root}/2.0`;
}

/** `Bearer` for access tokens; `Basic` for `username:app-password`. The values to redact with it. */
export function bitbucketAuth(token: string): { header: string; secrets: string[] } {
  const colon = token.indexOf(':');
  if (colon < 0) return { header: `Bearer ${token}`, secrets: [token] };
  const encoded = Buffer.from(token, 'utf8').toString('base64');
  return { header: `Basic ${encoded}`, secrets: [token, encoded, token.slice(colon + 1)] };
}

export class BitbucketProvider implements VcsProvider {
  private readonly client: JsonClient;

  constructor(config: VcsProfileConfig, options: VcsProviderOptions = {}) {
    const headers: Record<string, string> = { Accept: 'application/json' };
    const auth = config.token ? bitbucketAuth(config.token) : null;
    if (auth) headers.Authorization = auth.header;
    this.client = providerClient(options, {
      provider: NAME,
      baseUrl: bitbucketApiBase(config.baseUrl),
      headers,
      secrets: auth?.secrets ?? [],
    });
  }

  async whoami(): Promise<{ account: string | null }> {
    const page = await this.client.get('user', { revalidate: true });
    const account =
      text(page.body, 'username') ?? text(page.body, 'nickname') ?? requiredText(NAME, page.body, 'the user', 'display_name');
    return { account };
  }

  async listRepositories(): Promise<RepositorySummary[]> {
    const accesses = await this.client.getAll('user/workspaces?pagelen=100', values('a workspace page'), next);
    const slugs = accesses.map((access) => requiredText(NAME, access, 'a workspace access', 'workspace', 'slug'));
    const perWorkspace: RepositorySummary[][] = [];
    for (let i = 0; i < slugs.length; i += WORKSPACE_CONCURRENCY) {
      const batch = slugs.slice(i, i + WORKSPACE_CONCURRENCY).map(async (slug) => {
        const repos = await this.client.getAll(
          `repositories/${encodeURIComponent(slug)}?pagelen=100`,
          values('a repository page'),
          next,
        );
        return repos.map(summary);
      });
      perWorkspace.push(...(await Promise.all(batch)));
    }
    return perWorkspace.flat();
  }

  async getRepository(name: string): Promise<RepositoryDetail> {
    const path = `repositories/${encodeSegments(splitRepoName(NAME, name, { min: 2, max: 2 }))}`;
    const [repo, branches] = await Promise.all([
      this.client.get(path),
      this.client.getAll(`${path}/refs/branches?pagelen=100`, values('a branch page'), next),
    ]);
    return { ...summary(repo.body), branches: branches.map(branch), ssh_url: sshCloneLink(repo.body) };
  }
}

function values(what: string): (body: unknown) => unknown[] {
  return (body) => asArray(NAME, asObject(NAME, body, what).values, `the values of ${what}`);
}

function next(page: JsonPage): string | null {
  return text(page.body, 'next');
}

function summary(value: unknown): RepositorySummary {
  const repo = asObject(NAME, value, 'a repository');
  return {
    name: requiredText(NAME, repo, 'a repository', 'full_name'),
    default_branch: text(repo, 'mainbranch', 'name'),
    private: flag(repo, 'is_private'),
    web_url: text(repo, 'links', 'html', 'href'),
  };
}

/** `links.clone` is a list of `{name: "https" | "ssh", href}`. */
function sshCloneLink(value: unknown): string | null {
  const clone = (value as { links?: { clone?: unknown } } | null)?.links?.clone;
  if (!Array.isArray(clone)) return null;
  const ssh = clone.find((link) => text(link, 'name') === 'ssh');
  return ssh ? text(ssh, 'href') : null;
}

function branch(value: unknown): Branch {
  return { name: requiredText(NAME, value, 'a branch', 'name'), commit: text(value, 'target', 'hash') };
}
