import type { Actor } from '../../domain/auth/actor.js';
import { notFound } from '../../domain/errors.js';
import { UUID_RE, ValidationError } from '../../domain/field-errors.js';
import { keyset } from '../../storage/paging.js';
import type { UseCaseDeps } from '../deps.js';
import { type PageRequest, toPage } from '../pagination.js';
import { latestOperations } from './latest-operations.js';
import { siteRecord } from './site-record.js';

/**
 * GET /api/v1/sites/<uuid> as JSON (UTF-8 bytes), from the cache while the site's server has had no write
 * since it was built (the cache keeps the owning team: another tenant's request misses and reads,
 * and finds nothing). A deleted site, or one of another tenant, is not found.
 */
export async function getSiteJson(deps: UseCaseDeps, actor: Actor, uuid: string): Promise<Buffer> {
  if (!UUID_RE.test(uuid)) throw notFound('Site');
  const site = uuid.toLowerCase();
  const taken = deps.siteLists.siteStamp(site);
  const readAt = taken instanceof Promise ? await taken : taken;
  const hit = deps.siteLists.getSite(site, actor.teamUuids, readAt);
  if (hit) return hit;
  const row = await deps.db
    .selectFrom('sites')
    .selectAll()
    .where('uuid', '=', site)
    .where('deleted_at', 'is', null)
    .where('team_uuid', 'in', actor.teamUuids)
    .executeTakeFirst();
  if (!row) throw notFound('Site');
  const ops = await latestOperations(deps.db, [row.uuid]);
  const body = Buffer.from(JSON.stringify(siteRecord(row, ops.get(row.uuid))));
  deps.siteLists.setSite(site, row.server_uuid, { team: row.team_uuid, body }, readAt);
  return body;
}

/** The list cache's key for one page: the limit and cursor as given (the first page is `listCacheKey()`). */
export function listCacheKey(limit?: string, cursor?: string): string {
  return `${limit ?? ''}&${cursor ?? ''}`;
}

/**
 * The list as JSON (UTF-8 bytes), from the cache when this server's sites have not changed since it was
 * built. The query string is part of the key, so each page and limit is cached on its own.
 */
export async function listSitesJson(
  deps: UseCaseDeps,
  actor: Actor,
  query: { server?: string; limit?: string; cursor?: string },
  page: () => PageRequest,
): Promise<{ body: Buffer; nextCursor: string | null }> {
  const key = listCacheKey(query.limit, query.cursor);
  const server = query.server?.toLowerCase();
  // The stamp comes first: see site-list-cache.ts for why that keeps lists consistent across processes.
  const taken = server && UUID_RE.test(server) ? deps.siteLists.stamp(server) : null;
  const stamp = taken instanceof Promise ? await taken : taken;
  const hit = server && stamp ? deps.siteLists.get(server, key, actor.teamUuids, stamp) : undefined;
  if (hit) return { body: hit.body, nextCursor: hit.link };
  const result = await listSitesOfServer(deps, actor, server, page());
  const body = Buffer.from(JSON.stringify(result.page));
  if (stamp) deps.siteLists.set(result.server, key, { team: result.team, body, link: result.page.meta.next_cursor }, stamp);
  return { body, nextCursor: result.page.meta.next_cursor };
}

/** GET /api/v1/sites?server=<uuid>: the live sites of one server, oldest first, cursor-paged. */
async function listSitesOfServer(deps: UseCaseDeps, actor: Actor, server: string | undefined, page: PageRequest) {
  if (!server) throw new ValidationError([{ field: 'server', code: 'required', message: 'Query parameter server is required.' }]);
  if (!UUID_RE.test(server))
    throw new ValidationError([{ field: 'server', code: 'invalid_format', message: 'server must be a UUID.' }]);
  const owner = await deps.db
    .selectFrom('servers')
    .select(['uuid', 'team_uuid'])
    .where('uuid', '=', server.toLowerCase())
    .where('deleted_at', 'is', null)
    .where('team_uuid', 'in', actor.teamUuids)
    .executeTakeFirst();
  if (!owner) throw notFound('Server');
  const rows = await keyset(
    deps.db.selectFrom('sites').selectAll().where('server_uuid', '=', owner.uuid).where('deleted_at', 'is', null),
    'sites',
    page,
  ).execute();
  const ops = await latestOperations(
    deps.db,
    rows.map((r) => r.uuid),
  );
  return { server: owner.uuid, team: owner.team_uuid, page: toPage(rows, page, (row) => siteRecord(row, ops.get(row.uuid))) };
}
