import { type Kysely, sql, type Transaction } from 'kysely';
import type { Dialect } from './database.js';
import type { Database } from './schema.js';

export type WriteWork<T> = (trx: Transaction<Database>) => Promise<T>;

/** Runs a unit of write work in a transaction of its own, or shared with others (see groupCommit). */
export type WriteTransactions = <T>(work: WriteWork<T>) => Promise<T>;

interface Pending {
  work: WriteWork<unknown>;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * SQLite has one writer, and committing is most of the cost of a small write (every dirty page is
 * appended to the WAL). Group commit runs the writes that arrive together in one transaction, each
 * inside a SAVEPOINT of its own: a unit that fails (a rule, a unique index lost to a neighbour) is
 * rolled back alone and the others go on. Every caller is answered only after the shared COMMIT,
 * so nothing is acknowledged before it is durable; if the COMMIT fails, every unit of the batch
 * fails with it. Units of one batch see each other's writes in order, exactly as if they had run
 * one after the other, which is what SQLite's single writer made them anyway.
 *
 * PostgreSQL has many writers and row locks, so there each unit keeps its own transaction.
 */
export function writeTransactions(db: Kysely<Database>, dialect: Dialect, maxBatch = 64): WriteTransactions {
  if (dialect === 'postgres') return (work) => db.transaction().execute(work);
  const queue: Pending[] = [];
  let scheduled = false;
  let draining: Promise<void> = Promise.resolve();

  const runBatch = async (batch: Pending[]): Promise<void> => {
    const outcomes: ({ ok: true; value: unknown } | { ok: false; error: unknown })[] = [];
    try {
      await db.transaction().execute(async (trx) => {
        for (const unit of batch) {
          await sql`SAVEPOINT unit`.execute(trx);
          try {
            const value = await unit.work(trx);
            await sql`RELEASE unit`.execute(trx);
            outcomes.push({ ok: true, value });
          } catch (error) {
            await sql`ROLLBACK TO unit`.execute(trx);
            await sql`RELEASE unit`.execute(trx);
            outcomes.push({ ok: false, error });
          }
        }
      });
    } catch (error) {
      for (const unit of batch) unit.reject(error);
      return;
    }
    for (const [i, unit] of batch.entries()) {
      const outcome = outcomes[i] as (typeof outcomes)[number];
      if (outcome.ok) unit.resolve(outcome.value);
      else unit.reject(outcome.error);
    }
  };

  const drain = () => {
    scheduled = false;
    // One batch at a time: the next one starts after this one committed, with all that arrived meanwhile.
    draining = draining.then(async () => {
      while (queue.length > 0) await runBatch(queue.splice(0, maxBatch));
    });
  };

  return <T>(work: WriteWork<T>) =>
    new Promise<T>((resolve, reject) => {
      queue.push({ work: work as WriteWork<unknown>, resolve: resolve as (value: unknown) => void, reject });
      if (!scheduled) {
        scheduled = true;
        // After the current I/O phase, so requests parsed together share a batch.
        setImmediate(drain);
      }
    });
}
