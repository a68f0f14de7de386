import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Actor } from '../domain/auth/actor.js';
import { sendProblem } from './problem.js';
import { type RateLimiter, refuseOverLimit } from './rate-limit.js';

export type Authenticate = ((token: string) => Promise<Actor | null>) & {
  /** The actor of a token resolved moments ago, without waiting; undefined when not known now (cachedAuthenticator). */
  peek?: (token: string) => Actor | undefined;
};

/** The token of an `Authorization: Bearer <token>` header, or null. */
export function bearerToken(header: string | undefined): string | null {
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1] ?? null;
}

/**
 * Bearer authentication (spec §5): 401 with WWW-Authenticate for a missing, unknown or revoked
 * token; 403 when a read-only token asks to write. With a limiter, 429 past the limit of the token,
 * or of the client address when there is no valid token.
 */
export async function authenticateRequest(
  req: FastifyRequest,
  reply: FastifyReply,
  authenticate: Authenticate,
  needs: 'read' | 'write',
  limiter?: RateLimiter,
): Promise<Actor | null> {
  const header = req.headers.authorization;
  const token = bearerToken(header);
  const actor = token ? await authenticate(token) : null;
  if (!actor) {
    if (await refuseOverLimit(req, reply, limiter, 'address', req.ip)) return null;
    reply.header('WWW-Authenticate', `Bearer realm="siteplane"${header ? ', error="invalid_token"' : ''}`);
    await sendProblem(
      req,
      reply,
      'unauthenticated',
      header ? 'The bearer token is unknown or revoked.' : 'Send Authorization: Bearer <token>.',
    );
    return null;
  }
  if (await refuseOverLimit(req, reply, limiter, 'token', actor.tokenUuid)) return null;
  if (needs === 'write' && actor.scope !== 'write') {
    await sendProblem(req, reply, 'forbidden', 'This token is read-only.');
    return null;
  }
  return actor;
}

/** Remembers resolved tokens for a few seconds: the hot paths then skip the token queries. */
export function cachedAuthenticator(inner: Authenticate, ttlMs = 2000, now = () => Date.now()): Authenticate {
  const cache = new Map<string, { actor: Actor | null; until: number }>();
  const fn = async (token: string) => {
    const hit = cache.get(token);
    if (hit && hit.until > now()) return hit.actor;
    const actor = await inner(token);
    if (cache.size > 10_000) cache.clear();
    cache.set(token, { actor, until: now() + ttlMs });
    return actor;
  };
  fn.peek = (token: string) => {
    const hit = cache.get(token);
    return hit && hit.until > now() ? (hit.actor ?? undefined) : undefined;
  };
  return fn;
}
