import { Type as T } from '@sinclair/typebox';

/** The paging query every list takes (parsed by use-cases/pagination.ts); documented once. */
export const PAGE_QUERY = T.Object({
  limit: T.Optional(T.Integer({ minimum: 1, maximum: 500, default: 100 })),
  cursor: T.Optional(T.String({ description: 'meta.next_cursor of the previous page' })),
});
