import { UUID_RE, ValidationError } from '../domain/field-errors.js';

/** Cursor paging of ARCHITECTURE §2 Lists: ordered by creation time then uuid. */
export interface PageRequest {
  limit: number;
  after: { createdAt: string; uuid: string } | null;
}

export interface Page<T> {
  data: T[];
  meta: { next_cursor: string | null; limit: number };
}

const ISO_TIME_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

export function parsePageQuery(query: { limit?: string; cursor?: string }): PageRequest {
  const errors = [];
  let limit = 100;
  if (query.limit !== undefined) {
    const n = Number(query.limit);
    if (!Number.isInteger(n) || n < 1 || n > 500)
      errors.push({ field: 'limit', code: 'out_of_range' as const, message: 'limit must be 1-500.' });
    else limit = n;
  }
  let after: PageRequest['after'] = null;
  if (query.cursor !== undefined) {
    const decoded = Buffer.from(query.cursor, 'base64url').toString('utf8');
    const [createdAt, uuid] = decoded.split('|');
    // Only what toPage writes: anything else (a NUL, for one) must not reach the query.
    if (!createdAt || !uuid || !UUID_RE.test(uuid) || !ISO_TIME_RE.test(createdAt) || Number.isNaN(Date.parse(createdAt))) {
      errors.push({ field: 'cursor', code: 'invalid_format' as const, message: 'cursor is not one this service issued.' });
    } else after = { createdAt, uuid };
  }
  if (errors.length) throw new ValidationError(errors);
  return { limit, after };
}

/** Rows were fetched with limit + 1 to learn whether a next page exists. */
export function toPage<R extends { created_at: string; uuid: string }, T>(
  rows: R[],
  page: PageRequest,
  map: (row: R) => T,
): Page<T> {
  const more = rows.length > page.limit;
  const kept = more ? rows.slice(0, page.limit) : rows;
  const last = kept[kept.length - 1];
  return {
    data: kept.map(map),
    meta: {
      next_cursor: more && last ? Buffer.from(`${last.created_at}|${last.uuid}`).toString('base64url') : null,
      limit: page.limit,
    },
  };
}
