import type { Kysely } from 'kysely';
import { recordEvent } from './event-log.js';
import type { Database } from './schema.js';
import { uniqueViolation } from './unique-violation.js';

/** Four values a row: far below SQLite's and PostgreSQL's limits on bound parameters. */
const LINES_PER_INSERT = 500;
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
   * Queues the line; writes keep their order. Lines queued while an earlier write runs are stored
   * together in one statement (a step logs several at once; one autocommitted insert each was a
   * third of a dry-run job's database time). `flush()` waits for them.
   */
  log(line: string): void {
    const at = new Date().toISOString();
    this.queued.push({ at, line: this.redact(line).slice(0, 8000) });
    if (this.queued.length === 1) this.pending = this.pending.then(() => this.append(this.queued.splice(0, this.queued.length)));
  }

  /**
   * One writer per operation, except when a worker lost its lease while still running a step: then
   * it and the new owner write lines at once. Sequence numbers the other took are skipped (after
   * the highest stored), so neither loses lines nor breaks its journal.
   */
  private async append(lines: { at: string; line: string }[]): Promise<void> {
    for (let from = 0; from < lines.length; from += LINES_PER_INSERT) {
      const chunk = lines.slice(from, from + LINES_PER_INSERT);
      for (let attempt = 1; ; attempt++) {
        const first = this.seq + 1;
        this.seq += chunk.length;
        try {
          const rows = chunk.map((l, i) => ({ operation_uuid: this.operationUuid, seq: first + i, at: l.at, line: l.line }));
          await this.db.insertInto('operation_logs').values(rows).execute();
          break;
        } catch (error) {
          if (attempt >= 5 || uniqueViolation(error) === null) throw error;
          this.seq = await maxSeq(this.db, this.operationUuid);
        }
      }
    }
    this.changed();
  }

  async flush(): Promise<void> {
    await this.pending;
  }

  async stepStarted(idx: number, name: string): Promise<void> {
    const now = new Date().toISOString();
    const values = {
      operation_uuid: this.operationUuid,
      idx,
      name,
      status: 'running' as const,
      exit_code: null,
      started_at: now,
      finished_at: null,
    };
    this.stepNames.set(idx, name);
    await this.withStepEvent({ index: idx, name, status: 'running', exit_code: null }, now, this.db, async (db) => {
      // A resumed job runs its steps again (they are idempotent); the step row is reused, not duplicated.
      await db
        .insertInto('operation_steps')
        .values(values)
        .onConflict((oc) =>
          oc
            .columns(['operation_uuid', 'idx'])
            .doUpdateSet({ name, status: 'running', exit_code: null, started_at: now, finished_at: null }),
        )
        .execute();
    });
    this.changed();
  }

  /** The step's change, with its `operation.step` event in the same transaction when events are recorded. */
  private async withStepEvent(
    step: { index: number; name: string | null; status: string; exit_code: number | null },
    now: string,
    db: Kysely<Database>,
    change: (db: Kysely<Database>) => Promise<void>,
  ): Promise<void> {
    const events = this.events;
    if (!events) return change(db);
    const write = async (trx: Kysely<Database>) => {
      await change(trx);
      await recordEvent(trx, {
        team: events.team,
        type: 'operation.step',
        subject: this.operationUuid,
        data: { operation: this.operationUuid, site: events.site, kind: events.kind, ...step },
        now,
      });
    };
    // Already in a transaction (an outcome's): the caller commits and announces.
    if (db !== this.db) return write(db);
    await this.db.transaction().execute(write);
    events.announce();
  }

  /** `db`: a transaction, when the step's status must commit with the operation's (jobs/operation-outcome.ts). */
  async stepFinished(
    idx: number,
    status: 'succeeded' | 'failed',
    exitCode: number | null,
    db: Kysely<Database> = this.db,
  ): Promise<void> {
    const now = new Date().toISOString();
    await this.withStepEvent(
      { index: idx, name: this.stepNames.get(idx) ?? null, status, exit_code: exitCode },
      now,
      db,
      async (trx) => {
        await trx
          .updateTable('operation_steps')
          .set({ status, exit_code: exitCode, finished_at: now })
          .where('operation_uuid', '=', this.operationUuid)
          .where('idx', '=', idx)
          .execute();
      },
    );
    // In a transaction, readers see the step only after its commit; they read again on their timer.
    this.changed();
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
