import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Clock } from '../app/clock.js';
import type { SecretBox } from '../crypto/secret-box.js';
import { type ChangeNotifier, TEAM_EVENTS_PREFIX } from '../storage/change-notifier.js';
import type { Dialect } from '../storage/database.js';
import { type EventCursor, eventsHeldBack, readEvents, type StoredEvent } from '../storage/event-reader.js';
import type { Database } from '../storage/schema.js';
import { timeOrderedUuid } from '../storage/time-ordered-uuid.js';
import { HELD_BACK_RETRY_MS } from '../use-cases/events/follow-events.js';
import { type PostOutcome, postEvent } from '../use-cases/outgoing-webhooks/post-event.js';
import { signingSecrets } from '../use-cases/outgoing-webhooks/webhook-signature.js';

/**
 * How long after a failed attempt the event is tried again: 10 s, 1 min, 5 min, 30 min, 2 h, 6 h,
 * 12 h (eight attempts over about 21 hours). After the last one the delivery is marked failed and
 * the endpoint moves on to its next event: one dead receiver must not hold the log back for ever,
 * and a receiver down for a day has the delivery log to see what it missed.
 */
export const WEBHOOK_BACKOFF_MS = [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000, 43_200_000];
/** A process delivering for an endpoint holds it this long, renewed at each event (> one request). */
const LEASE_MS = 60_000;
/** Events taken per endpoint per turn. */
const BATCH = 50;
/** Endpoints looked at per turn. */
const ENDPOINTS_PER_TURN = 200;

export interface WebhookDispatcherDeps {
  db: Kysely<Database>;
  dialect: Dialect;
  secrets: SecretBox;
  clock: Clock;
  log: Pick<Logger, 'error' | 'warn'>;
  /** The egress-guarded fetch (egress/guarded-fetch.ts): the policy is checked at connect time. */
  fetch: typeof fetch;
  /** Tests: shorter waits between attempts. */
  backoffMs?: readonly number[];
  /**
   * Wakes the dispatcher when a team's change log grows (here or, on PostgreSQL, in another
   * process), so an event goes out at once rather than at the next poll.
   */
  changes?: ChangeNotifier;
}

/** With change notifications, the poll is only a fallback (a lost notification, a lease run out). */
export const WEBHOOK_FALLBACK_POLL_MS = 10_000;

/** After serving an endpoint: nothing more now; all it read went out (more may have come); events wait behind a running transaction. */
type Served = 'idle' | 'more' | 'held';

const cursorOfRow = (row: Database['outgoing_webhooks']): EventCursor => ({
  xid: Number(row.cursor_xid),
  seq: Number(row.cursor_seq),
  floor: Number(row.cursor_floor),
});

/**
 * Outgoing webhooks (use-cases/outgoing-webhooks): in the worker process, every `pollMs`, each
 * endpoint with events after its cursor (matching its types, of its team only) and no retry pending
 * is taken under a lease (a conditional UPDATE: on PostgreSQL several worker processes skip an
 * endpoint another one holds), and its events are POSTed one at a time, in log order, signed the
 * Standard Webhooks way. Endpoints are served side by side, each by one task at a time, so a slow
 * receiver delays only its own events. Every attempt is written to the delivery log with the cursor or retry
 * state in one transaction, so a restart resumes where it stopped. A delivery is at least once: a
 * process that dies between the receiver's answer and the commit sends the event again (same
 * `webhook-id`, so receivers can drop the repeat).
 */
export class WebhookDispatcher {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** A wake came during a turn: another turn follows at once. */
  private again = false;
  private stopped = false;
  private unsubscribe: (() => void) | null = null;
  /** Endpoints being served by this process: a slow receiver holds up only its own endpoint. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Aborts the requests under way when the process stops (their events are sent again later). */
  private readonly stopping = new AbortController();
  private readonly backoff: readonly number[];
  private readonly pollMs: number;

  /** `pollMs`: how often endpoints are looked at without a wake (default 1 s, or 10 s with change notifications). */
  constructor(
    private readonly deps: WebhookDispatcherDeps,
    pollMs?: number,
  ) {
    this.backoff = deps.backoffMs ?? WEBHOOK_BACKOFF_MS;
    this.pollMs = pollMs ?? (deps.changes ? WEBHOOK_FALLBACK_POLL_MS : 1_000);
  }

  start(): void {
    this.unsubscribe = this.deps.changes?.subscribePrefix(TEAM_EVENTS_PREFIX, () => this.wake()) ?? null;
    this.runTurn();
  }

  /** Look at the endpoints now: at once when idle, right after the current turn otherwise. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.runTurn();
  }

  private runTurn(): void {
    this.again = false;
    this.running = this.startDue()
      .then((started) => {
        // An endpoint served to the end of what it read may have more by now: look again when it is done.
        for (const serving of started)
          void serving.then((next) => {
            if (next === 'more') this.wake();
            // On PostgreSQL, committed events behind a transaction still running: soon, not at the next poll.
            else if (next === 'held') setTimeout(() => this.wake(), HELD_BACK_RETRY_MS).unref();
          });
      })
      .catch((error: unknown) => this.deps.log.error({ err: error }, 'delivering outgoing webhooks failed'))
      .then(() => this.untilNext())
      .catch(() => this.pollMs)
      .then((waitMs) => {
        this.running = null;
        if (this.stopped) return;
        if (this.again) return this.runTurn();
        this.timer = setTimeout(() => {
          this.timer = null;
          this.runTurn();
        }, waitMs);
        this.timer.unref();
      });
  }

  /** The poll interval, or less when a retry falls due sooner. */
  private async untilNext(): Promise<number> {
    const row = await this.deps.db
      .selectFrom('outgoing_webhooks')
      .select((eb) => eb.fn.min('next_attempt_at').as('next'))
      .where('next_attempt_at', 'is not', null)
      .executeTakeFirst();
    const next = row?.next ? Date.parse(String(row.next)) - this.deps.clock.now().getTime() : Number.POSITIVE_INFINITY;
    return Math.max(10, Math.min(this.pollMs, next));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    if (this.timer) clearTimeout(this.timer);
    this.stopping.abort();
    await this.running;
    await Promise.all(this.inFlight.values());
  }

  /** One pass over the endpoints that may have work; answers when their batches are done (tests). */
  async turn(): Promise<void> {
    await Promise.all(await this.startDue());
  }

  /** Starts serving each endpoint that may have work and is not served here already; each answers whether it may have more. */
  private async startDue(): Promise<Promise<Served>[]> {
    const now = this.deps.clock.now().toISOString();
    const due = await this.deps.db
      .selectFrom('outgoing_webhooks')
      .selectAll()
      .where('enabled', '=', 1)
      .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', now)]))
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now)]))
      .orderBy('created_at')
      .limit(ENDPOINTS_PER_TURN)
      .execute();
    const started: Promise<Served>[] = [];
    for (const row of due) {
      if (this.inFlight.has(row.uuid)) continue;
      const serving = this.serve(row)
        .catch((error: unknown) => {
          this.deps.log.error({ err: error, webhook: row.uuid }, 'delivering a webhook failed');
          return 'idle' as const;
        })
        .finally(() => this.inFlight.delete(row.uuid));
      this.inFlight.set(
        row.uuid,
        serving.then(() => undefined),
      );
      started.push(serving);
    }
    return started;
  }

  private async pending(row: Database['outgoing_webhooks']): Promise<StoredEvent[]> {
    return readEvents(this.deps.db, this.deps.dialect, [row.team_uuid], cursorOfRow(row), {
      types: JSON.parse(row.events) as string[],
      limit: BATCH,
    });
  }

  /** Delivers what the endpoint has pending. */
  private async serve(seen: Database['outgoing_webhooks']): Promise<Served> {
    // Read first: an endpoint with nothing to send costs no write.
    if ((await this.pending(seen)).length === 0) {
      const held = await eventsHeldBack(this.deps.db, this.deps.dialect, [seen.team_uuid], cursorOfRow(seen));
      return held ? 'held' : 'idle';
    }
    const { db, clock } = this.deps;
    const token = randomUUID();
    const now = clock.now();
    const claimed = await db
      .updateTable('outgoing_webhooks')
      .set({ lease_token: token, lease_until: new Date(now.getTime() + LEASE_MS).toISOString() })
      .where('uuid', '=', seen.uuid)
      .where((eb) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<', now.toISOString())]))
      .where((eb) => eb.or([eb('next_attempt_at', 'is', null), eb('next_attempt_at', '<=', now.toISOString())]))
      .executeTakeFirst();
    if (Number(claimed.numUpdatedRows) !== 1) return 'idle'; // another process has it, or a retry is not due
    try {
      // Read again under the lease: another process may have moved the cursor meanwhile.
      const row = await db.selectFrom('outgoing_webhooks').selectAll().where('uuid', '=', seen.uuid).executeTakeFirst();
      if (!row) return 'idle';
      let attempts = row.attempts;
      for (const event of await this.pending(row)) {
        if (this.stopping.signal.aborted) return 'idle';
        // Changed meanwhile (PATCH): paused, the rest waits for the resume; a new url or events, read again.
        const current = await this.deps.db
          .selectFrom('outgoing_webhooks')
          .select(['enabled', 'url', 'events'])
          .where('uuid', '=', row.uuid)
          .executeTakeFirst();
        if (!current || Number(current.enabled) !== 1) return 'idle';
        if (current.url !== row.url || current.events !== row.events) return 'more';
        const sentAt = clock.now();
        const secrets = signingSecrets(row, (sealed) => this.deps.secrets.open(sealed), sentAt);
        const outcome = await postEvent(this.deps.fetch, row.url, secrets, event, sentAt, this.stopping.signal);
        // Cut short by the stop, not the receiver's doing: not an attempt (an answer that came is kept).
        if (outcome.status === null && this.stopping.signal.aborted) return 'idle';
        attempts += 1;
        const delivered = outcome.status !== null && outcome.status >= 200 && outcome.status < 300;
        const giveUp = !delivered && attempts > this.backoff.length;
        const at = clock.now();
        const next = delivered || giveUp ? null : new Date(at.getTime() + (this.backoff[attempts - 1] as number)).toISOString();
        const kept = await this.record(row.uuid, token, event, attempts, outcome, at, delivered, giveUp, next);
        if (!kept || next !== null) return 'idle';
        attempts = 0;
      }
      return 'more';
    } finally {
      await db
        .updateTable('outgoing_webhooks')
        .set({ lease_token: null, lease_until: null })
        .where('uuid', '=', seen.uuid)
        .where('lease_token', '=', token)
        .execute();
    }
  }

  /** The attempt in the delivery log and the endpoint's new state, together; false when the lease was lost. */
  private async record(
    webhook: string,
    token: string,
    event: StoredEvent,
    attempt: number,
    outcome: PostOutcome,
    at: Date,
    delivered: boolean,
    giveUp: boolean,
    next: string | null,
  ): Promise<boolean> {
    const done = next === null;
    return this.deps.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('outgoing_webhooks')
        .set({
          ...(done ? { cursor_xid: event.xid, cursor_seq: event.seq, cursor_floor: 0 } : {}),
          attempts: done ? 0 : attempt,
          next_attempt_at: next,
          lease_until: new Date(at.getTime() + LEASE_MS).toISOString(),
        })
        .where('uuid', '=', webhook)
        .where('lease_token', '=', token)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false; // deleted, or the lease ran out
      await trx
        .insertInto('outgoing_webhook_deliveries')
        .values({
          uuid: timeOrderedUuid(at.getTime()),
          webhook_uuid: webhook,
          event_seq: event.seq,
          event_type: event.type,
          attempt,
          status_code: outcome.status,
          error: giveUp ? `${outcome.error}; gave up after ${attempt} attempts` : outcome.error,
          duration_ms: Math.round(outcome.ms),
          next_attempt_at: next,
          delivered_at: delivered ? at.toISOString() : null,
          created_at: at.toISOString(),
          resend_of: null,
        })
        .execute();
      return true;
    });
  }
}
