import { type Kysely, sql } from 'kysely';
import type { Dialect } from './database.js';
import type { Database } from './schema.js';

/** Where a reader of a change log stands: after the event (xid, seq); see migrations/013_events.ts. */
export interface EventCursor {
  xid: number;
  seq: number;
  /** Only events numbered above this (a resume point that is no longer in the log). */
  floor: number;
}

export const START: EventCursor = { xid: -1, seq: 0, floor: 0 };

export interface StoredEvent {
  seq: number;
  xid: number;
  type: string;
  subject: string;
  data: Record<string, unknown>;
  created_at: string;
}

/**
 * The cursor just after event `seq` of these teams. An event no longer in the log (pruned) or never
 * in it resumes after its number (`floor`); on PostgreSQL an event numbered lower but committed
 * later than a pruned one may then be missed — the retention is days, a reconnect seconds.
 */
export async function cursorAfter(db: Kysely<Database>, teams: string[], seq: number): Promise<EventCursor> {
  if (seq === 0 || teams.length === 0) return START;
  const row = await db
    .selectFrom('events')
    .select('xid')
    .where('seq', '=', seq)
    .where('team_uuid', 'in', teams)
    .executeTakeFirst();
  return row ? { xid: Number(row.xid), seq, floor: 0 } : { ...START, floor: seq };
}

/**
 * The teams' next events after the cursor, in an order no later commit can precede: on SQLite
 * (one writer) by seq; on PostgreSQL by (xid, seq), and only those of transactions older than every
 * transaction still running, whose rows can no longer appear before them.
 */
export async function readEvents(
  db: Kysely<Database>,
  dialect: Dialect,
  teams: string[],
  cursor: EventCursor,
  options: { types?: string[] | null; limit?: number } = {},
): Promise<StoredEvent[]> {
  if (teams.length === 0) return [];
  let query = db
    .selectFrom('events')
    .select(['seq', 'xid', 'kind', 'subject_uuid', 'payload', 'created_at'])
    .where('team_uuid', 'in', teams)
    .where((eb) => eb(eb.refTuple('xid', 'seq'), '>', eb.tuple(cursor.xid, cursor.seq)));
  if (cursor.floor > 0) query = query.where('seq', '>', cursor.floor);
  if (options.types?.length) query = query.where('kind', 'in', options.types);
  if (dialect === 'postgres') query = query.where(sql<boolean>`xid < pg_snapshot_xmin(pg_current_snapshot())::text::bigint`);
  const rows = await query
    .orderBy('xid')
    .orderBy('seq')
    .limit(options.limit ?? 500)
    .execute();
  return rows.map(storedEvent);
}

/** One event of a team by its seq (a resend by hand); null once pruned. */
export async function readEvent(db: Kysely<Database>, team: string, seq: number): Promise<StoredEvent | null> {
  const row = await db
    .selectFrom('events')
    .select(['seq', 'xid', 'kind', 'subject_uuid', 'payload', 'created_at'])
    .where('seq', '=', seq)
    .where('team_uuid', '=', team)
    .executeTakeFirst();
  return row ? storedEvent(row) : null;
}

function storedEvent(r: {
  seq: number | string;
  xid: number | string;
  kind: string;
  subject_uuid: string;
  payload: string;
  created_at: string;
}): StoredEvent {
  return {
    seq: Number(r.seq),
    xid: Number(r.xid),
    type: r.kind,
    subject: r.subject_uuid,
    data: JSON.parse(r.payload) as Record<string, unknown>,
    created_at: r.created_at,
  };
}

/**
 * PostgreSQL: whether committed events of these teams after the cursor wait behind a transaction
 * still running (readEvents leaves them out until it ends); the reader then reads again soon
 * rather than waiting for the next notification. Always false on SQLite.
 */
export async function eventsHeldBack(
  db: Kysely<Database>,
  dialect: Dialect,
  teams: string[],
  cursor: EventCursor,
): Promise<boolean> {
  if (dialect !== 'postgres' || teams.length === 0) return false;
  const row = await db
    .selectFrom('events')
    .select('seq')
    .where('team_uuid', 'in', teams)
    .where((eb) => eb(eb.refTuple('xid', 'seq'), '>', eb.tuple(cursor.xid, cursor.seq)))
    .where(sql<boolean>`xid >= pg_snapshot_xmin(pg_current_snapshot())::text::bigint`)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** The cursor after an event that was read. */
export function cursorOf(e: StoredEvent): EventCursor {
  return { xid: e.xid, seq: e.seq, floor: 0 };
}
