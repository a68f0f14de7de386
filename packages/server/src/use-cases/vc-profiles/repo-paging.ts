/**
 * Paging of a profile's repositories. The provider's pages are all read first (issue 5: complete
 * answers); the list envelope of ARCHITECTURE §2 is then cut from that whole list, ordered by name
 * (a repository has no creation time of ours). The cursor is the last name of the page, so paging
 * on while the provider's list changes neither repeats nor skips a repository that stayed.
 */
import { ValidationError } from '../../domain/field-errors.js';
import { type Page, parsePageQuery } from '../pagination.js';

export interface RepoPageRequest {
  limit: number;
  /** Names after this one; null for the first page. */
  after: string | null;
}

const PREFIX = 'repo:';

export function parseRepoPageQuery(query: { limit?: string; cursor?: string }): RepoPageRequest {
  const { limit } = parsePageQuery({ limit: query.limit }); // same limit rules as every list
  if (query.cursor === undefined) return { limit, after: null };
  const decoded = Buffer.from(query.cursor, 'base64url').toString('utf8');
  if (!decoded.startsWith(PREFIX) || decoded.length === PREFIX.length) {
    throw new ValidationError([{ field: 'cursor', code: 'invalid_format', message: 'cursor is not one this service issued.' }]);
  }
  return { limit, after: decoded.slice(PREFIX.length) };
}

/** By UTF-16 code unit, the same order the cursor's `>` compares in (localeCompare is not). */
const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

export function pageOfRepos<T extends { name: string }>(all: readonly T[], page: RepoPageRequest): Page<T> {
  const after = page.after;
  const rest = [...all].sort(byName).filter((repo) => after === null || repo.name > after);
  const data = rest.slice(0, page.limit);
  const last = data[data.length - 1];
  const more = rest.length > page.limit && last !== undefined;
  return {
    data,
    meta: {
      next_cursor: more ? Buffer.from(`${PREFIX}${last.name}`).toString('base64url') : null,
      limit: page.limit,
    },
  };
}
