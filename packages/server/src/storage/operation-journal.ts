import type { Kysely } from 'kysely';
import type { Database } from './schema.js';

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
  ) {}

  static async open(db: Kysely<Database>, operationUuid: string, redact: (line: string) => string): Promise<OperationJournal> {
    const journal = new OperationJournal(db, operationUuid, redact);
    const row = await db
      .selectFrom('operation_logs')
      .select((eb) => eb.fn.max('seq').as('max'))
      .where('operation_uuid', '=', operationUuid)
      .executeTakeFirst();
    journal.seq = Number(row?.max ?? 0);
    return journal;
  }

  /** Queues the line; writes keep their order. `flush()` waits for them. */
  log(line: string): void {
    const seq = ++this.seq;
    const at = new Date().toISOString();
    const text = this.redact(line).slice(0, 8000);
    this.pending = this.pending.then(() =>
      this.db.insertInto('operation_logs').values({ operation_uuid: this.operationUuid, seq, at, line: text }).execute(),
    );
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
  }

  async stepFinished(idx: number, status: 'succeeded' | 'failed', exitCode: number | null): Promise<void> {
    await this.db
      .updateTable('operation_steps')
      .set({ status, exit_code: exitCode, finished_at: new Date().toISOString() })
      .where('operation_uuid', '=', this.operationUuid)
      .where('idx', '=', idx)
      .execute();
  }
}

/** Replaces every occurrence of the given secrets with ***. */
export function redactor(secrets: (string | undefined | null)[]): (line: string) => string {
  const list = secrets.filter((s): s is string => typeof s === 'string' && s.length >= 4).sort((a, b) => b.length - a.length);
  return (line) => list.reduce((out, secret) => out.split(secret).join('***'), line);
}
