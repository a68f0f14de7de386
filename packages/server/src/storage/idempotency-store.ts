import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import { uniqueViolation } from './unique-violation.js';

export type IdempotencyRow = Database['idempotency_keys'];

/** Idempotency keys per account, kept 24 hours (ARCHITECTURE §2 Idempotency). */
export class IdempotencyStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Reserves the key; returns the existing row instead when it is already taken and still fresh. */
  async reserve(
    row: Omit<IdempotencyRow, 'status_code' | 'response' | 'headers'>,
    freshAfter: string,
  ): Promise<IdempotencyRow | null> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('account_uuid', '=', row.account_uuid)
      .where('key', '=', row.key)
      .where('created_at', '<', freshAfter)
      .execute();
    try {
      await this.db
        .insertInto('idempotency_keys')
        .values({ ...row, status_code: null, response: null, headers: null })
        .execute();
      return null;
    } catch (error) {
      if (!uniqueViolation(error)) throw error;
      return (
        (await this.db
          .selectFrom('idempotency_keys')
          .selectAll()
          .where('account_uuid', '=', row.account_uuid)
          .where('key', '=', row.key)
          .executeTakeFirst()) ?? null
      );
    }
  }

  async complete(account: string, key: string, status: number, response: string, headers: Record<string, string>): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ status_code: status, response, headers: JSON.stringify(headers) })
      .where('account_uuid', '=', account)
      .where('key', '=', key)
      .execute();
  }

  async release(account: string, key: string): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where('account_uuid', '=', account).where('key', '=', key).execute();
  }
}
