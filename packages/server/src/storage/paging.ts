import type { SelectQueryBuilder } from 'kysely';
import type { PageRequest } from '../use-cases/pagination.js';

/** Applies keyset paging on (created_at, uuid) of table T to a query. */
export function keyset<DB, TB extends keyof DB & string, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  table: TB,
  page: PageRequest,
): SelectQueryBuilder<DB, TB, O> {
  // biome-ignore lint/suspicious/noExplicitAny: column references built from the table name
  const col = (c: string) => `${table}.${c}` as any;
  let q = query;
  if (page.after) {
    const { createdAt, uuid } = page.after;
    q = q.where((eb) =>
      eb.or([eb(col('created_at'), '>', createdAt), eb.and([eb(col('created_at'), '=', createdAt), eb(col('uuid'), '>', uuid)])]),
    );
  }
  return q
    .orderBy(col('created_at'))
    .orderBy(col('uuid'))
    .limit(page.limit + 1);
}
