import type { Kysely } from 'kysely';
import { type ChangeNotifier, teamEventsTopic } from './change-notifier.js';
import { insertRow } from './insert-row.js';
import type { Database } from './schema.js';

/** Every kind of change the log records (GET /api/v1/events `type`, a webhook's `events[]`). */
export const EVENT_TYPES = [
  'site.created',
  'site.installed',
  'site.failed',
  'site.deleting',
  'site.deleted',
  'site.delete_failed',
  'operation.step',
  'operation.finished',
  'deployment.succeeded',
  'deployment.failed',
  'deployment.cancelled',
  'certificate.issued',
  'certificate.renewed',
  'certificate.failed',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

export interface NewEvent {
  team: string;
  type: EventType;
  /** The record the event is about: a site, operation, deployment (certificates: their site). */
  subject: string;
  /** What a reader needs without another request; never a secret. */
  data: Record<string, unknown>;
  now: string;
}

/**
 * Appends one event to the team's change log, in the caller's transaction: the event commits with
 * the change it describes, or neither does. One insert, nothing read (site creates are benchmarked).
 * After the commit the caller calls `announceEvents`, so streams read the log again at once.
 */
export async function recordEvent(trx: Kysely<Database>, e: NewEvent): Promise<void> {
  await insertRow(trx, 'events', {
    team_uuid: e.team,
    kind: e.type,
    subject_uuid: e.subject,
    payload: JSON.stringify(e.data),
    created_at: e.now,
  });
}

/** Teams announced during this turn of the event loop, per notifier. */
const pending = new WeakMap<ChangeNotifier, Set<string>>();

/**
 * Tells the team's event readers (here and, on PostgreSQL, in other processes) that its log grew.
 * Announcements of one turn are sent once per team: a burst of creates costs one notification
 * (one pg_notify on PostgreSQL), not one each. Readers also read on a timer, so none is lost for good.
 */
export function announceEvents(changes: ChangeNotifier | undefined, team: string): void {
  if (!changes) return;
  let teams = pending.get(changes);
  if (!teams) {
    const batch = new Set<string>();
    teams = batch;
    pending.set(changes, batch);
    setImmediate(() => {
      pending.delete(changes);
      for (const t of batch) changes.notify(teamEventsTopic(t));
    });
  }
  teams.add(team);
}

/** Drops events older than the retention (run by the worker process now and then). */
export async function pruneEvents(db: Kysely<Database>, olderThan: string): Promise<number> {
  const r = await db.deleteFrom('events').where('created_at', '<', olderThan).executeTakeFirst();
  return Number(r.numDeletedRows);
}
