import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import { uniqueViolation } from './unique-violation.js';

/**
 * Steps and log lines of one operation. Lines are appended with their own sequence numbers (no blob
 * rewritten per chunk, a peer's mistake), after the redactor removed every known secret.
 */
export class OperationJournal {
  private seq = 0;
  private pending: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly db: Kysely<Database>,
    readonly operationUuid: string,
    private readonly redact: (line: string) => string,
    private readonly changed: () => void,
  ) {}

  /** `changed` is told after each line or step is stored (the operation's event stream reads them). */
  static async open(
    db: Kysely<Database>,
    operationUuid: string,
    redact: (line: string) => string,
    changed: () => void = () => undefined,
  ): Promise<OperationJournal> {
    const journal = new OperationJournal(db, operationUuid, redact, changed);
    journal.seq = await maxSeq(db, operationUuid);
    return journal;
  }

  /** Queues the line; writes keep their order. `flush()` waits for them. */
  log(line: string): void {
    const at = new Date().toISOString();
    const text = this.redact(line).slice(0, 8000);
    this.pending = this.pending.then(() => this.append(at, text));
  }

  /**
   * One writer per operation, except when a worker lost its lease while still running a step: then
   * it and the new owner write lines at once. A sequence number the other took is skipped (after
   * the highest stored), so neither loses lines nor breaks its journal.
   */
  private async append(at: string, line: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const seq = ++this.seq;
      try {
        await this.db.insertInto('operation_logs').values({ operation_uuid: this.operationUuid, seq, at, line }).execute();
        this.changed();
        return;
      } catch (error) {
        if (attempt >= 5 || uniqueViolation(error) === null) throw error;
        this.seq = await maxSeq(this.db, this.operationUuid);
      }
    }
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
    // A resumed job runs its steps again (they are idempotent); the step row is reused, not duplicated.
    await this.db
      .insertInto('operation_steps')
      .values(values)
      .onConflict((oc) =>
        oc
          .columns(['operation_uuid', 'idx'])
          .doUpdateSet({ name, status: 'running', exit_code: null, started_at: now, finished_at: null }),
      )
      .execute();
    this.changed();
  }

  /** `db`: a transaction, when the step's status must commit with the operation's (jobs/operation-outcome.ts). */
  async stepFinished(
    idx: number,
    status: 'succeeded' | 'failed',
    exitCode: number | null,
    db: Kysely<Database> = this.db,
  ): Promise<void> {
    await db
      .updateTable('operation_steps')
      .set({ status, exit_code: exitCode, finished_at: new Date().toISOString() })
      .where('operation_uuid', '=', this.operationUuid)
      .where('idx', '=', idx)
      .execute();
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
