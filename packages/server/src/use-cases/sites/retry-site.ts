import type { Actor } from '../../domain/auth/actor.js';
import { checkEmptyBody } from '../../domain/empty-body.js';
import { notFound } from '../../domain/errors.js';
import { UUID_RE } from '../../domain/field-errors.js';
import { decideRetry } from '../../domain/sites/retry-rule.js';
import { lockLiveSite } from '../../storage/site-context.js';
import type { UseCaseDeps } from '../deps.js';
import { enqueueOperation } from '../operations/enqueue-operation.js';
import { type SiteRecord, siteRecord } from './site-record.js';

/**
 * POST /api/v1/sites/<uuid>/retry: runs a failed create or delete again (domain/sites/retry-rule.ts
 * decides which). 202 with the site and the new operation, or the one already queued or running.
 * The site keeps its `failure` until the new operation succeeds, so what went wrong stays visible.
 */
export async function retrySite(deps: UseCaseDeps, actor: Actor, uuid: string, body: unknown): Promise<SiteRecord> {
  // Empty: a retry runs what the site already asked for; changing it is a new site.
  checkEmptyBody(body);
  if (!UUID_RE.test(uuid)) throw notFound('Site');
  const result = await deps.writes(async (trx) => {
    const site = await lockLiveSite(trx, deps.dialect, uuid, actor);
    if (!site) throw notFound('Site');
    const operations = await trx
      .selectFrom('operations')
      .select(['uuid', 'kind', 'status', 'params', 'created_at', 'finished_at'])
      .where('site_uuid', '=', site.uuid)
      .where('kind', 'in', ['create', 'delete'])
      .orderBy('created_at')
      .orderBy('uuid')
      .execute();
    const failure = site.failure ? (JSON.parse(site.failure) as { operation?: string }) : null;
    const decision = decideRetry(
      { status: site.status, failedOperation: failure?.operation ?? null },
      operations.map((o) => ({ ...o, params: JSON.parse(o.params) as Record<string, unknown> })),
    );
    if (decision.action === 'answer') {
      return {
        record: siteRecord(
          site,
          operations.find((o) => o.uuid === decision.operation),
        ),
        enqueued: false,
      };
    }
    const now = deps.clock.now().toISOString();
    await trx.updateTable('sites').set({ status: decision.status, updated_at: now }).where('uuid', '=', site.uuid).execute();
    const operation = await enqueueOperation(trx, { site, kind: decision.kind, params: decision.params, now });
    return { record: siteRecord({ ...site, status: decision.status, updated_at: now }, operation), enqueued: true };
  });
  deps.siteLists.invalidate(result.record.server);
  if (result.enqueued) deps.jobEnqueued();
  return result.record;
}
