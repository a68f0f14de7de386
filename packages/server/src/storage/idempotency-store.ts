import { randomUUID } from 'node:crypto';
import type { ExpressionBuilder, Kysely } from 'kysely';
import type { Database } from './schema.js';
import { uniqueViolation } from './unique-violation.js';

export type IdempotencyRow = Database['idempotency_keys'];

/** Whose keys: an account and the set of its teams a token reaches (http/idempotency.ts). */
export interface IdempotencyScope {
  account_uuid: string;
  team_set: string;
}

/** A key this request holds while it runs; `token` fences a holder whose reservation was taken over. */
export interface Reservation {
  scope: IdempotencyScope;
  key: string;
  token: string;
}

export type ReserveResult = { reserved: Reservation } | { existing: IdempotencyRow };

/**
 * Idempotency keys per account and team set (ARCHITECTURE §2 Idempotency). Times are ISO strings,
 * compared as text like every time in this database.
 */
export class IdempotencyStore {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Reserves the key, or returns the row that holds it. A row older than `freshAfter`, or a
   * reservation whose lease ran out before `now` (its request died with its process), is taken
   * over: deleted and reserved anew.
   */
  async reserve(
    row: IdempotencyScope & Pick<IdempotencyRow, 'key' | 'method' | 'path' | 'body_hash'>,
    times: { now: string; freshAfter: string; reservedUntil: string },
  ): Promise<ReserveResult> {
    const scope = { account_uuid: row.account_uuid, team_set: row.team_set };
    // Twice at most: the row found taken may be taken over (deleted) before it is read.
    for (let attempt = 0; attempt < 2; attempt++) {
      await this.db
        .deleteFrom('idempotency_keys')
        .where(keyIs(scope, row.key))
        .where((eb) =>
          eb.or([
            eb('created_at', '<', times.freshAfter),
            eb.and([eb('status_code', 'is', null), eb('reserved_until', '<', times.now)]),
          ]),
        )
        .execute();
      const token = randomUUID();
      try {
        await this.db
          .insertInto('idempotency_keys')
          .values({
            ...row,
            status_code: null,
            response: null,
            headers: null,
            created_at: times.now,
            reservation: token,
            reserved_until: times.reservedUntil,
          })
          .execute();
        return { reserved: { scope, key: row.key, token } };
      } catch (error) {
        if (!uniqueViolation(error)) throw error;
      }
      const existing = await this.db.selectFrom('idempotency_keys').selectAll().where(keyIs(scope, row.key)).executeTakeFirst();
      if (existing) return { existing };
    }
    throw new Error('an idempotency key changed hands twice while it was being reserved');
  }

  /** Stores the response; nothing when the reservation was taken over in the meantime. */
  async complete(held: Reservation, status: number, response: string, headers: Record<string, string>): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .where(heldBy(held))
      .set({ status_code: status, response, headers: JSON.stringify(headers), reservation: null, reserved_until: null })
      .execute();
  }

  /** Frees the key for a retry (the request failed with a 5xx). */
  async release(held: Reservation): Promise<void> {
    await this.db.deleteFrom('idempotency_keys').where(heldBy(held)).execute();
  }

  /** Extends the leases of reservations whose requests still run in this process. */
  async extend(held: Reservation[], until: string): Promise<void> {
    if (held.length === 0) return;
    await this.db
      .updateTable('idempotency_keys')
      .set({ reserved_until: until })
      .where(
        'reservation',
        'in',
        held.map((r) => r.token),
      )
      .where('status_code', 'is', null)
      .execute();
  }

  /**
   * Deletes up to `limit` rows created before `before`, oldest first; returns how many. Bounded so
   * that a backlog never holds the database in one long statement.
   */
  async purge(before: string, limit: number): Promise<number> {
    const result = await this.db
      .deleteFrom('idempotency_keys')
      .where('created_at', '<', before)
      .where(({ eb, refTuple, selectFrom }) =>
        eb(
          refTuple('account_uuid', 'team_set', 'key'),
          'in',
          selectFrom('idempotency_keys')
            .select(['account_uuid', 'team_set', 'key'])
            .where('created_at', '<', before)
            .orderBy('created_at')
            .limit(limit)
            .$asTuple('account_uuid', 'team_set', 'key'),
        ),
      )
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

function keyIs(scope: IdempotencyScope, key: string) {
  return (eb: ExpressionBuilder<Database, 'idempotency_keys'>) =>
    eb.and([eb('account_uuid', '=', scope.account_uuid), eb('team_set', '=', scope.team_set), eb('key', '=', key)]);
}

/** The row as this reservation left it: a late finisher whose reservation was taken over changes nothing. */
function heldBy(held: Reservation) {
  return (eb: ExpressionBuilder<Database, 'idempotency_keys'>) =>
    eb.and([keyIs(held.scope, held.key)(eb), eb('reservation', '=', held.token)]);
}
