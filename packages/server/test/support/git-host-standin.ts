import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/app/config.js';
import { realIntegrations } from '../../src/app/integrations.js';
import { EgressPolicy } from '../../src/egress/egress-policy.js';
import type { Integrations } from '../../src/use-cases/integrations.js';
import { parseGitRemote } from '../../src/vcs/git-remote.js';
import { VcsError, type VcsProvider } from '../../src/vcs/provider.js';

/**
 * A git host as `git ls-remote` sees it, for `git` profiles whose remotes are not reachable from
 * the tests (ssh remotes of private repositories): every listed remote has `main` and `develop`,
 * any other name is not found. The real GitProvider is tested against real git servers elsewhere.
 */
export function gitHostStandin(repositories: string[]): VcsProvider {
  const remotes = repositories.map((url) => parseGitRemote(url));
  const summary = (name: string) => ({ name, default_branch: 'main', private: null, web_url: null });
  return {
    whoami: async () => ({ account: null }),
    listRepositories: async () => remotes.flatMap((r) => (r ? [summary(r.name)] : [])),
    async getRepository(name) {
      if (!remotes.some((r) => r?.name === name)) throw new VcsError('not_found', `no remote named ${name}`);
      return {
        ...summary(name),
        branches: [
          { name: 'main', commit: null },
          { name: 'develop', commit: null },
        ],
        ssh_url: null,
      };
    },
  };
}

/** The real integrations for this environment, with `git` profiles answered by the stand-in above. */
export function integrationsWithGitHost(env: Record<string, string>): Integrations {
  const config = loadConfig({
    SITEPLANE_DATA_DIR: '/nonexistent',
    SITEPLANE_SECRET_KEY: randomBytes(32).toString('base64'),
    ...env,
  });
  const real = realIntegrations(config, new EgressPolicy(config.allowedTargets));
  return {
    ...real,
    vcsProvider: (uuid, profile) =>
      profile.provider === 'git' ? gitHostStandin(profile.repositories) : real.vcsProvider(uuid, profile),
  };
}
