import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Page, type PageRequest, parsePageQuery } from '../../use-cases/pagination.js';
import { QueryError } from '../query-error.js';
import { setNextLink } from './link-header.js';

/** Runs a list use case with the request's paging query and sets the Link header. */
export async function paged<T>(
  req: FastifyRequest,
  reply: FastifyReply,
  list: (page: PageRequest) => Promise<Page<T>>,
): Promise<Page<T>> {
  const page = await QueryError.wrapAsync(async () => list(parsePageQuery(req.query as { limit?: string; cursor?: string })));
  setNextLink(req, reply, page.meta.next_cursor);
  return page;
}
