import type { Kysely } from 'kysely';
import { type NewEvent, recordEvent } from '../storage/event-log.js';
import type { Database } from '../storage/schema.js';

type Outcome = 'succeeded' | 'failed' | 'cancelled';

/** Why an operation failed, as stored on it (already redacted). */
interface Failure {
  step: string | null;
  message: string;
}

/**
 * The change-log events of an operation's outcome (storage/event-log.ts), recorded in the
 * transaction that records the outcome (jobs/operation-outcome.ts): `operation.finished` always,
 * and what it meant for its subject: a site installed, failed or deleted, a deployment's result,
 * a certificate issued, renewed or not.
 */
export async function recordOutcomeEvents(
  trx: Kysely<Database>,
  op: Database['operations'],
  site: Database['sites'],
  outcome: Outcome,
  failure: Failure | null,
  now: string,
): Promise<void> {
  // A certificate operation that succeeded without a certificate (a dry-run server orders none)
  // reports only its operation; one that installed a certificate says when it expires.
  let certificate: { expires_at: string | null } | null = null;
  if (op.kind === 'ssl' && outcome === 'succeeded') {
    const row = await trx.selectFrom('sites').select('ssl').where('uuid', '=', site.uuid).executeTakeFirst();
    const ssl = row ? (JSON.parse(row.ssl) as { status: string; expires_at: string | null }) : null;
    if (ssl?.status === 'active') certificate = { expires_at: ssl.expires_at };
  }
  for (const e of outcomeEvents(op, site, outcome, failure, certificate, now)) await recordEvent(trx, e);
}

function outcomeEvents(
  op: Database['operations'],
  site: Database['sites'],
  outcome: Outcome,
  failure: Failure | null,
  certificate: { expires_at: string | null } | null,
  now: string,
): NewEvent[] {
  const base = { team: site.team_uuid, now };
  const about = { site: site.uuid, server: site.server_uuid, domain: site.domain, operation: op.uuid };
  const why = failure ? { step: failure.step, message: failure.message } : {};
  const events: NewEvent[] = [
    { ...base, type: 'operation.finished', subject: op.uuid, data: { ...about, kind: op.kind, status: outcome, ...why } },
  ];
  const params = JSON.parse(op.params) as { deployment?: string; reason?: string };
  if (op.kind === 'create')
    events.push({
      ...base,
      type: outcome === 'succeeded' ? 'site.installed' : 'site.failed',
      subject: site.uuid,
      data: { ...about, type: site.type, ...why },
    });
  else if (op.kind === 'delete')
    events.push({
      ...base,
      type: outcome === 'succeeded' ? 'site.deleted' : 'site.delete_failed',
      subject: site.uuid,
      data: { ...about, ...why },
    });
  else if (op.kind === 'ssl' && (outcome !== 'succeeded' || certificate))
    events.push({
      ...base,
      type:
        outcome !== 'succeeded'
          ? 'certificate.failed'
          : params.reason === 'renewal'
            ? 'certificate.renewed'
            : 'certificate.issued',
      subject: site.uuid,
      data: { ...about, reason: params.reason ?? null, ...(certificate ?? {}), ...why },
    });
  else if (op.kind !== 'ssl' && params.deployment)
    events.push({
      ...base,
      type: `deployment.${outcome}`,
      subject: params.deployment,
      data: { ...about, deployment: params.deployment, kind: op.kind, ...why },
    });
  return events;
}
