import type { Actor } from '../../domain/auth/actor.js';
import { ValidationError } from '../../domain/field-errors.js';
import { type ChangeNotifier, teamEventsTopic } from '../../storage/change-notifier.js';
import { EVENT_TYPES } from '../../storage/event-log.js';
import { cursorAfter, cursorOf, eventsHeldBack, readEvents } from '../../storage/event-reader.js';
import { ChangeWaiter } from '../change-waiter.js';
import type { UseCaseDeps } from '../deps.js';

/** How soon a stream reads again when events wait behind a running transaction (those are short). */
export const HELD_BACK_RETRY_MS = 50;

export interface TeamEvent {
  event: string;
  id: number;
  data: { seq: number; type: string; subject: string; created_at: string; data: Record<string, unknown> };
}

/** `?types=site.created,deployment.*`: known types, or a family with `.*`; null = every type. */
export function parseTypes(raw: string | undefined): string[] | null {
  if (raw === undefined || raw.trim() === '') return null;
  const wanted = new Set<string>();
  for (const item of raw.split(',').map((t) => t.trim())) {
    const matches = item.endsWith('.*')
      ? EVENT_TYPES.filter((t) => t.startsWith(item.slice(0, -1)))
      : EVENT_TYPES.filter((t) => t === item);
    if (matches.length === 0)
      throw new ValidationError([
        {
          field: 'types',
          code: 'invalid_value',
          message: `"${item}" is not an event type (${EVENT_TYPES.join(', ')}; or a family such as site.*).`,
        },
      ]);
    for (const t of matches) wanted.add(t);
  }
  return [...wanted];
}

/**
 * The caller's teams' change log as it grows (GET /api/v1/events): the events after `afterSeq`,
 * then each new one, read whenever a team's log is announced (storage/event-log.ts) and on a timer,
 * so an announcement lost between processes only delays. Each event's id is its seq: a client that
 * reconnects with the last one it saw gets every later event once. Runs until the client leaves.
 */
export async function* followEvents(
  deps: Pick<UseCaseDeps, 'db' | 'dialect'> & { changes: ChangeNotifier },
  actor: Actor,
  afterSeq: number,
  types: string[] | null,
  signal: AbortSignal,
  pollMs = 2_000,
): AsyncGenerator<TeamEvent> {
  const teams = actor.teamUuids;
  const waiter = new ChangeWaiter();
  // Subscribed before the first read, so an event committed during a read is not missed.
  const unsubscribe = teams.map((team) => deps.changes.subscribe(teamEventsTopic(team), waiter.notify));
  try {
    let cursor = await cursorAfter(deps.db, teams, afterSeq);
    while (!signal.aborted) {
      waiter.reading();
      const batch = await readEvents(deps.db, deps.dialect, teams, cursor, { types });
      for (const e of batch) {
        cursor = cursorOf(e);
        yield {
          event: e.type,
          id: e.seq,
          data: { seq: e.seq, type: e.type, subject: e.subject, created_at: e.created_at, data: e.data },
        };
      }
      if (batch.length > 0 || waiter.changed) continue;
      // Committed events behind a transaction still running: read again shortly, not at the next notification.
      const held = await eventsHeldBack(deps.db, deps.dialect, teams, cursor);
      await waiter.wait(held ? HELD_BACK_RETRY_MS : pollMs, signal);
    }
  } finally {
    for (const off of unsubscribe) off();
  }
}
