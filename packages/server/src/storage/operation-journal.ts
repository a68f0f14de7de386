import type { Kysely } from 'kysely';
import { recordEvent } from './event-log.js';
import { queryPerShape } from './query-per-shape.js';
import type { Database } from './schema.js';
import { uniqueViolation } from './unique-violation.js';

/** Four values a row: far below SQLite's and PostgreSQL's limits on bound parameters. */
const LINES_PER_INSERT = 500;
/**
 * How long logged lines wait for more before they are written: a step logs a line per command, an
 * await apart; readers of a running operation see its lines this much later at most.
 */
const LINES_DELAY_MS = 25;
/** Where a journal records `operation.step` events (the team's change log) and whom it tells. */
export interface StepEvents {
  team: string;
  site: string;
  kind: string;
  announce(): void;
}

/**
 * Steps and log lines of one operation. Lines are appended with their own sequence numbers (no blob
 * rewritten per chunk, a peer's mistake), after the redactor removed every known secret.
 */
export class OperationJournal {
  private seq = 0;
  /** Step names by index, for the `operation.step` event of a step's end. */
  private readonly stepNames = new Map<number, string>();
  private pending: Promise<unknown> = Promise.resolve();
  /** Lines logged and not yet taken by a write. */
  private readonly queued: { at: string; line: string }[] = [];
  /** Set while lines wait for the delayed write. */
  private timer: NodeJS.Timeout | null = null;

  private constructor(
    private readonly db: Kysely<Database>,
    readonly operationUuid: string,
    private readonly redact: (line: string) => string,
    private readonly changed: () => void,
    private readonly events: StepEvents | null,
  ) {}

  /**
   * `changed` is told after each line or step is stored (the operation's event stream reads them);
   * with `events`, each step's start and end is also an `operation.step` event, committed with it.
   */
  static async open(
    db: Kysely<Database>,
    operationUuid: string,
    redact: (line: string) => string,
    changed: () => void = () => undefined,
    events: StepEvents | null = null,
  ): Promise<OperationJournal> {
    const journal = new OperationJournal(db, operationUuid, redact, changed, events);
    journal.seq = await maxSeq(db, operationUuid);
    return journal;
  }

  /**
   * Queues the line; writes keep their order. Lines are written a moment after the first of them
   * was logged (LINES_DELAY_MS), all together in one statement, or sooner with the step's end in
   * the same transaction (`stepBoundary`): one autocommitted insert per line was a third of a
   * dry-run job's database time. `flush()` writes them now and waits.
   */
  log(line: string): void {
    const at = new Date().toISOString();
    this.queued.push({ at, line: this.redact(line).slice(0, 8000) });
    if (this.queued.length === 1 && !this.timer) this.timer = setTimeout(() => this.writeQueued(), LINES_DELAY_MS);
  }

  private writeQueued(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.pending = this.pending.then(() => this.append(this.queued.splice(0, this.queued.length)));
    // A write the timer started may fail with nobody waiting (the run ended, the service closing):
    // marked handled here so it cannot end the process; `flush()` still throws it to a caller.
    this.pending.catch(() => undefined);
  }

  /**
   * One writer per operation, except when a worker lost its lease while still running a step: then
   * it and the new owner write lines at once. Sequence numbers the other took are skipped (after
   * the highest stored), so neither loses lines nor breaks its journal.
   */
  private async append(lines: { at: string; line: string }[]): Promise<void> {
    if (lines.length === 0) return;
    // Chunk by chunk, each retried alone: an earlier chunk is already stored (autocommitted).
    for (let from = 0; from < lines.length; from += LINES_PER_INSERT) {
      const chunk = lines.slice(from, from + LINES_PER_INSERT);
      for (let attempt = 1; ; attempt++) {
        try {
          await this.insertLines(this.db, chunk);
          break;
        } catch (error) {
          if (attempt >= 5 || uniqueViolation(error) === null) throw error;
          this.seq = await maxSeq(this.db, this.operationUuid);
        }
      }
    }
    this.changed();
  }

  /** Inserts the lines after the last sequence number this journal knows of (in chunks of LINES_PER_INSERT). */
  private async insertLines(db: Kysely<Database>, lines: { at: string; line: string }[]): Promise<void> {
    for (let from = 0; from < lines.length; from += LINES_PER_INSERT) {
      const chunk = lines.slice(from, from + LINES_PER_INSERT);
      const first = this.seq + 1;
      this.seq += chunk.length;
      const rows = chunk.map((l, i) => ({ operation_uuid: this.operationUuid, seq: first + i, at: l.at, line: l.line }));
      await db.insertInto('operation_logs').values(rows).execute();
    }
  }

  /**
   * Between two steps of a run, in one transaction: the lines logged so far, then — only while
   * `holds` (the claim still holds the job, read in the same transaction) — the end of step
   * `finished` (succeeded) and the start of `next`. False when the claim no longer holds: no step
   * changed (the lines are stored all the same, as they would have been). Before, these were up
   * to five transactions and a read: the check, each step's change with its event, the lines.
   */
  async stepBoundary(
    finished: number | null,
    next: { idx: number; name: string } | null,
    holds: (trx: Kysely<Database>) => Promise<boolean>,
  ): Promise<boolean> {
    const work = this.pending.then(() => this.boundary(finished, next, holds));
    this.pending = work.catch(() => undefined);
    return work;
  }

  private async boundary(
    finished: number | null,
    next: { idx: number; name: string } | null,
    holds: (trx: Kysely<Database>) => Promise<boolean>,
  ): Promise<boolean> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const lines = this.queued.splice(0, this.queued.length);
    if (next) this.stepNames.set(next.idx, next.name);
    for (let attempt = 1; ; attempt++) {
      const seq = this.seq;
      try {
        const now = new Date().toISOString();
        let held = false;
        let events = false;
        await this.db.transaction().execute(async (trx) => {
          await this.insertLines(trx, lines);
          held = await holds(trx);
          if (!held) return;
          if (finished !== null) events = (await this.finishStep(trx, finished, 'succeeded', 0, now)) || events;
          if (next) events = (await this.startStep(trx, next.idx, next.name, now)) || events;
        });
        if (events) this.events?.announce();
        this.changed();
        return held;
      } catch (error) {
        // A unique violation on a line's sequence number (another writer took it) rolled everything back.
        this.seq = seq;
        if (attempt >= 5 || uniqueViolation(error) === null) throw error;
        this.seq = await maxSeq(this.db, this.operationUuid);
      }
    }
  }

  async flush(): Promise<void> {
    if (this.queued.length > 0) this.writeQueued();
    await this.pending;
  }

  async stepStarted(idx: number, name: string): Promise<void> {
    this.stepNames.set(idx, name);
    const now = new Date().toISOString();
    await this.inTransaction(this.db, (trx) => this.startStep(trx, idx, name, now));
    this.changed();
  }

  /** `db`: a transaction, when the step's status must commit with the operation's (jobs/operation-outcome.ts). */
  async stepFinished(
    idx: number,
    status: 'succeeded' | 'failed',
    exitCode: number | null,
    db: Kysely<Database> = this.db,
  ): Promise<void> {
    const now = new Date().toISOString();
    await this.inTransaction(db, (trx) => this.finishStep(trx, idx, status, exitCode, now));
    // In a transaction, readers see the step only after its commit; they read again on their timer.
    this.changed();
  }

  /**
   * The change on `db` when it is a transaction already (an outcome's: the caller commits and
   * announces), otherwise in a transaction of its own, announced once committed.
   */
  private async inTransaction(db: Kysely<Database>, change: (trx: Kysely<Database>) => Promise<boolean>): Promise<void> {
    if (db !== this.db) {
      await change(db);
      return;
    }
    if (await this.db.transaction().execute(change)) this.events?.announce();
  }

  /** The step's row, running; with its `operation.step` event when events are recorded (true then). */
  private async startStep(trx: Kysely<Database>, idx: number, name: string, now: string): Promise<boolean> {
    const values = {
      operation_uuid: this.operationUuid,
      idx,
      name,
      status: 'running' as const,
      exit_code: null,
      started_at: now,
      finished_at: null,
    };
    const again = { name, status: 'running' as const, exit_code: null, started_at: now, finished_at: null };
    // A resumed job runs its steps again (they are idempotent); the step row is reused, not duplicated.
    // Compiled once (query-per-shape.ts): the values, then the update's, in the SQL's order.
    await queryPerShape(trx, 'startStep', [...Object.values(values), ...Object.values(again)], () =>
      trx
        .insertInto('operation_steps')
        .values(values)
        .onConflict((oc) => oc.columns(['operation_uuid', 'idx']).doUpdateSet(again)),
    );
    return this.stepEvent(trx, { index: idx, name, status: 'running', exit_code: null }, now);
  }

  private async finishStep(
    trx: Kysely<Database>,
    idx: number,
    status: 'succeeded' | 'failed',
    exitCode: number | null,
    now: string,
  ): Promise<boolean> {
    await queryPerShape(trx, 'finishStep', [status, exitCode, now, this.operationUuid, idx], () =>
      trx
        .updateTable('operation_steps')
        .set({ status, exit_code: exitCode, finished_at: now })
        .where('operation_uuid', '=', this.operationUuid)
        .where('idx', '=', idx),
    );
    return this.stepEvent(trx, { index: idx, name: this.stepNames.get(idx) ?? null, status, exit_code: exitCode }, now);
  }

  /** The step's `operation.step` event, in the caller's transaction; false when this journal records none. */
  private async stepEvent(
    trx: Kysely<Database>,
    step: { index: number; name: string | null; status: string; exit_code: number | null },
    now: string,
  ): Promise<boolean> {
    const events = this.events;
    if (!events) return false;
    await recordEvent(trx, {
      team: events.team,
      type: 'operation.step',
      subject: this.operationUuid,
      data: { operation: this.operationUuid, site: events.site, kind: events.kind, ...step },
      now,
    });
    return true;
  }
}

async function maxSeq(db: Kysely<Database>, operationUuid: string): Promise<number> {
  const row = await db
    .selectFrom('operation_logs')
    .select((eb) => eb.fn.max('seq').as('max'))
    .where('operation_uuid', '=', operationUuid)
    .executeTakeFirst();
  return Number(row?.max ?? 0);
}

/** Replaces every occurrence of the given secrets with ***. */
export function redactor(secrets: (string | undefined | null)[]): (line: string) => string {
  const list = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4).sort((a, b) => b.length - a.length);
  return (line) => list.reduce((out, secret) => out.split(secret).join('***'), line);
}
