import type { FastifyReply, FastifyRequest } from 'fastify';

/** `Link: <…>; rel="next"` when a list has a next page (ARCHITECTURE §2 Lists). */
export function setNextLink(req: FastifyRequest, reply: FastifyReply, cursor: string | null): void {
  if (!cursor) return;
  const url = new URL(req.url, 'http://placeholder');
  url.searchParams.set('cursor', cursor);
  reply.header('Link', `<${url.pathname}${url.search}>; rel="next"`);
}
