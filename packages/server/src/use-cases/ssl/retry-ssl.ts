/**
 * POST /api/v1/sites/<uuid>/ssl: asks for the site's certificate again (after DNS was fixed, a
 * rate limit passed, a DNS profile's credentials were replaced). 202 with the site and its `ssl`
 * operation; while one is queued or running, that one is returned instead of a second. A temporary
 * name in the operator's zone that may not be ordered yet is a 429 with Retry-After (retry-hold.ts).
 */
import type { Actor } from '../../domain/auth/actor.js';
import { checkEmptyBody } from '../../domain/empty-body.js';
import { DomainError, notFound } from '../../domain/errors.js';
import { UUID_RE, ValidationError } from '../../domain/field-errors.js';
import { lockLiveSite } from '../../storage/site-context.js';
import type { UseCaseDeps } from '../deps.js';
import { type SiteRecord, siteRecord } from '../sites/site-record.js';
import { enqueueSsl, openSslOperation } from './enqueue-ssl.js';
import { assertMayOrderNow } from './retry-hold.js';
import { parseSsl } from './site-ssl-state.js';

export async function retrySsl(deps: UseCaseDeps, actor: Actor, uuid: string, body: unknown): Promise<SiteRecord> {
  // Empty: nothing about the certificate is chosen here, it follows the site.
  checkEmptyBody(body);
  if (!UUID_RE.test(uuid)) throw notFound('Site');
  const result = await deps.db.transaction().execute(async (trx) => {
    const site = await lockLiveSite(trx, deps.dialect, uuid, actor);
    if (!site) throw notFound('Site');
    const ssl = parseSsl(site.ssl);
    if (!ssl.enabled) {
      throw new ValidationError([
        { field: 'ssl', code: 'requires_ssl', message: 'The site was created with ssl false; it has no certificate to issue.' },
      ]);
    }
    if (site.status !== 'installed') {
      throw new DomainError('conflict', `The site is ${site.status}; its certificate can be requested once it is installed.`);
    }
    // An open operation is answered as it is; a new one must be allowed to order.
    if (!(await openSslOperation(trx, site.uuid))) await assertMayOrderNow(deps, trx, site, deps.clock.now());
    const now = deps.clock.now().toISOString();
    const { operation, created } = await enqueueSsl(trx, site, 'retry', now);
    let row = site;
    if (created && ssl.status !== 'active') {
      const pending = JSON.stringify({ ...ssl, status: 'pending' });
      await trx.updateTable('sites').set({ ssl: pending, updated_at: now }).where('uuid', '=', site.uuid).execute();
      row = { ...site, ssl: pending, updated_at: now };
    }
    return { record: siteRecord(row, operation), created };
  });
  deps.siteLists.invalidate(result.record.server);
  if (result.created) deps.jobEnqueued();
  return result.record;
}
