import type { Actor } from '../../domain/auth/actor.js';
import type { RepositoryDetail, RepositorySummary } from '../../vcs/provider.js';
import type { UseCaseDeps } from '../deps.js';
import type { Page } from '../pagination.js';
import { findVcProfile, profileConfig } from './manage-vc-profiles.js';
import { pageOfRepos, type RepoPageRequest } from './repo-paging.js';
import { vcsDomainError } from './vcs-errors.js';

/** GET /api/v1/vc-profiles/<uuid>/repos: every repository, paged here after the provider's pages were all read. */
export async function listRepositories(
  deps: UseCaseDeps,
  actor: Actor,
  profileUuid: string,
  page: RepoPageRequest,
): Promise<Page<RepositorySummary>> {
  const row = await findVcProfile(deps, actor, profileUuid);
  try {
    // Building the provider is inside: a git profile's stored remote it cannot use is a VcsError too.
    const repos = await deps.integrations.vcsProvider(row.uuid, profileConfig(deps, row)).listRepositories();
    return pageOfRepos(repos, page);
  } catch (error) {
    throw vcsDomainError(error, 'list');
  }
}

/** GET /api/v1/vc-profiles/<uuid>/repos/<name>: default_branch and every branch. */
export async function getRepository(
  deps: UseCaseDeps,
  actor: Actor,
  profileUuid: string,
  name: string,
): Promise<RepositoryDetail> {
  const row = await findVcProfile(deps, actor, profileUuid);
  try {
    return await deps.integrations.vcsProvider(row.uuid, profileConfig(deps, row)).getRepository(name);
  } catch (error) {
    throw vcsDomainError(error, 'repository');
  }
}
