import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Actor } from '../domain/auth/actor.js';
import { UUID_RE } from '../domain/field-errors.js';
import type { ObserveRequest } from '../metrics/request-metrics.js';
import { listCacheKey } from '../use-cases/sites/read-sites.js';
import type { SiteListCache } from '../use-cases/sites/site-list-cache.js';
import { bearerToken } from './auth.js';
import type { RateLimiter } from './rate-limit.js';
import { JSON_MEDIA_TYPE } from './route.js';

export interface CachedReadsDeps {
  siteLists: SiteListCache;
  /** The actor of a token resolved moments ago (the authenticator's cache), else undefined. */
  peekActor: (token: string) => Actor | undefined;
  limiter: RateLimiter;
  observe?: ObserveRequest;
}

/** Answers the request and returns true, or returns false having touched nothing: Fastify answers it. */
export type CachedReads = (req: IncomingMessage, res: ServerResponse) => boolean;

const LIST_PREFIX = '/api/v1/sites?server=';
const SITE_PREFIX = '/api/v1/sites/';
const UUID_LENGTH = 36;
const FIRST_PAGE = listCacheKey();

/**
 * The two hottest reads, a server's site list (`GET /api/v1/sites?server=<uuid>`, first page) and
 * one site (`GET /api/v1/sites/<uuid>`), answered from the site cache before Fastify sees the
 * request — only when everything the route would do is already settled in memory: the bearer token
 * is in the authenticator's cache, the cached answer is current (one process: its stamp is
 * synchronous; with PostgreSQL shared by several processes the stamp is a query, so Fastify's route
 * takes it), one of the token's teams owns it, and the token is within its rate limit. Anything
 * else (a miss, another query parameter, a token not seen in the last seconds, a HEAD) goes to
 * Fastify unchanged, and its route fills the cache. The bytes and headers are the route's own
 * (cached-reads.test.ts compares them).
 *
 * Why outside Fastify: with the body already cached, Fastify's own work per request (request and
 * reply objects, a child logger, the hooks) was most of what stood between the list and raw
 * node:http (0.55-0.6x of raw on 2 cores, issue 13 asks 0.9x).
 */
export function cachedReads(deps: CachedReadsDeps): CachedReads {
  return (req, res) => {
    const url = req.url;
    if (req.method !== 'GET' || url === undefined) return false;
    const isList = url.length === LIST_PREFIX.length + UUID_LENGTH && url.startsWith(LIST_PREFIX);
    if (!isList && !(url.length === SITE_PREFIX.length + UUID_LENGTH && url.startsWith(SITE_PREFIX))) return false;
    const started = deps.observe ? performance.now() : 0;
    const token = bearerToken(req.headers.authorization);
    const actor = token ? deps.peekActor(token) : undefined;
    if (!actor) return false;
    const answer = isList
      ? cachedList(deps.siteLists, url.slice(LIST_PREFIX.length).toLowerCase(), actor)
      : cachedSite(deps.siteLists, url.slice(SITE_PREFIX.length).toLowerCase(), actor);
    // Counted only for an answer given here: a request that falls through is counted by the route.
    if (answer === undefined || deps.limiter.take('token', actor.tokenUuid) !== 0) return false;
    res.writeHead(200, { 'content-type': JSON_MEDIA_TYPE, 'content-length': answer.body.length });
    res.end(answer.body);
    deps.observe?.('GET', answer.route, 200, (performance.now() - started) / 1000);
    return true;
  };
}

function cachedList(siteLists: SiteListCache, server: string, actor: Actor) {
  if (!UUID_RE.test(server)) return undefined;
  const stamp = siteLists.stamp(server);
  if (stamp instanceof Promise) return undefined;
  const hit = siteLists.get(server, FIRST_PAGE, actor.teamUuids, stamp);
  // A list with a next page carries a Link header: the route writes it.
  return hit && hit.link === null ? { route: '/api/v1/sites', body: hit.body } : undefined;
}

function cachedSite(siteLists: SiteListCache, site: string, actor: Actor) {
  if (!UUID_RE.test(site)) return undefined;
  const readAt = siteLists.siteStamp(site);
  if (readAt instanceof Promise) return undefined;
  const body = siteLists.getSite(site, actor.teamUuids, readAt);
  return body === undefined ? undefined : { route: '/api/v1/sites/:site', body };
}
