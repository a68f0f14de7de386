import type { Actor } from '../../domain/auth/actor.js';
import type { UseCaseDeps } from '../deps.js';
import { type PageRequest, toPage } from '../pagination.js';
import { findVcProfile, profileConfig } from './manage-vc-profiles.js';
import { vcsDomainError } from './vcs-errors.js';

/** GET /api/v1/vc-profiles/<uuid>/repos: every repository, paged here after the provider's pages were all read. */
export async function listRepositories(deps: UseCaseDeps, actor: Actor, profileUuid: string, page: PageRequest) {
  const row = await findVcProfile(deps, actor, profileUuid);
  try {
    const repos = await deps.integrations.vcsProvider(row.uuid, profileConfig(deps, row)).listRepositories();
    const sorted = [...repos].sort((a, b) => a.name.localeCompare(b.name));
    // Repositories have no creation time of ours; the cursor is the name.
    const keyed = sorted.map((r) => ({ ...r, created_at: r.name, uuid: r.name }));
    const start = page.after ? keyed.findIndex((r) => r.name > (page.after?.uuid ?? '')) : 0;
    const slice = start < 0 ? [] : keyed.slice(start, start + page.limit + 1);
    return toPage(slice, page, ({ created_at: _c, uuid: _u, ...repo }) => repo);
  } catch (error) {
    throw vcsDomainError(error);
  }
}

/** GET /api/v1/vc-profiles/<uuid>/repos/<name>: default_branch and every branch. */
export async function getRepository(deps: UseCaseDeps, actor: Actor, profileUuid: string, name: string) {
  const row = await findVcProfile(deps, actor, profileUuid);
  try {
    return await deps.integrations.vcsProvider(row.uuid, profileConfig(deps, row)).getRepository(name);
  } catch (error) {
    throw vcsDomainError(error);
  }
}
