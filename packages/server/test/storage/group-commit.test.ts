import { copyFileSync, mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../src/storage/database.js';
import { writeTransactions } from '../../src/storage/group-commit.js';
import { timeOrderedUuid } from '../../src/storage/time-ordered-uuid.js';
import { TEST_DB } from '../support/test-service.js';

// Group commit is SQLite's (PostgreSQL keeps a transaction per unit); these run on a SQLite file.
describe.skipIf(TEST_DB === 'postgres')(
  'group commit on SQLite (issue 2 §9: creates share a transaction, each in a savepoint)',
  () => {
    let storage: Storage | null = null;
    let dir = '';
    afterEach(async () => {
      await storage?.close();
      storage = null;
      rmSync(dir, { recursive: true, force: true });
    });
    async function open() {
      dir = mkdtempSync(join(tmpdir(), 'siteplane-gc-'));
      storage = await openStorage({ sqliteFile: join(dir, 'siteplane.db') });
      await sql`CREATE TABLE t (k TEXT PRIMARY KEY, v TEXT NOT NULL)`.execute(storage.db);
      return storage;
    }
    const keys = async (s: Storage) => (await sql<{ k: string }>`SELECT k FROM t ORDER BY k`.execute(s.db)).rows.map((r) => r.k);

    it('a failing unit is rolled back alone; the others of its batch commit; each sees the earlier ones', async () => {
      const s = await open();
      const writes = writeTransactions(s.db, 'sqlite');
      const insert = (k: string) => writes((trx) => sql`INSERT INTO t (k, v) VALUES (${k}, 'x')`.execute(trx).then(() => k));
      const outcomes = await Promise.allSettled([
        insert('a'),
        writes(async (trx) => {
          await sql`INSERT INTO t (k, v) VALUES ('b', 'x')`.execute(trx);
          throw new Error('rule broken after a write');
        }),
        insert('a'), // the unique key the first unit of the same batch already took
        writes(async (trx) => (await sql<{ n: number }>`SELECT count(*) AS n FROM t`.execute(trx)).rows[0]?.n),
        insert('c'),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled']);
      expect((outcomes[2] as PromiseRejectedResult).reason.message).toMatch(/UNIQUE/);
      expect((outcomes[3] as PromiseFulfilledResult<number>).value).toBe(1); // 'a' only: 'b' was rolled back
      expect(await keys(s)).toEqual(['a', 'c']);
    });

    it('when the shared COMMIT fails, every unit of the batch fails and nothing is written', async () => {
      const s = await open();
      // A deferred foreign key is checked only at COMMIT: a real commit failure.
      await sql`CREATE TABLE child (p TEXT REFERENCES t (k) DEFERRABLE INITIALLY DEFERRED)`.execute(s.db);
      const writes = writeTransactions(s.db, 'sqlite');
      const outcomes = await Promise.allSettled([
        writes((trx) => sql`INSERT INTO t (k, v) VALUES ('ok', 'x')`.execute(trx)),
        writes((trx) => sql`INSERT INTO child (p) VALUES ('missing')`.execute(trx)),
      ]);
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
      expect(await keys(s)).toEqual([]);
      // The queue goes on after a failed batch.
      await writes((trx) => sql`INSERT INTO t (k, v) VALUES ('later', 'x')`.execute(trx));
      expect(await keys(s)).toEqual(['later']);
    });

    it('units arriving together share one transaction: none is visible outside before the shared COMMIT', async () => {
      const s = await open();
      const writes = writeTransactions(s.db, 'sqlite');
      const outside = new SQLite(join(dir, 'siteplane.db'), { readonly: true });
      const seenInside: number[] = [];
      const seenOutside: number[] = [];
      const count = 'SELECT count(*) AS n FROM t';
      try {
        await Promise.all(
          Array.from({ length: 20 }, (_, i) =>
            writes(async (trx) => {
              await sql`INSERT INTO t (k, v) VALUES (${`k${i}`}, 'x')`.execute(trx);
              seenInside.push((await sql<{ n: number }>`SELECT count(*) AS n FROM t`.execute(trx)).rows[0]?.n as number);
              seenOutside.push((outside.prepare(count).get() as { n: number }).n);
            }),
          ),
        );
        expect(seenInside).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
        expect(seenOutside).toEqual(Array.from({ length: 20 }, () => 0));
        expect((outside.prepare(count).get() as { n: number }).n).toBe(20);
      } finally {
        outside.close();
      }
    });

    it('the checkpoint thread copies committed writes into the database file itself', async () => {
      const s = await open();
      const writes = writeTransactions(s.db, 'sqlite');
      await writes((trx) => sql`INSERT INTO t (k, v) VALUES ('durable', 'x')`.execute(trx));
      // Only the main file, without its WAL: it holds the row once a checkpoint ran (every second).
      const copy = join(dir, 'copy.db');
      let found: string[] = [];
      for (let i = 0; i < 50 && found.length === 0; i++) {
        await new Promise((r) => setTimeout(r, 100));
        copyFileSync(join(dir, 'siteplane.db'), copy);
        const db = new SQLite(copy, { readonly: true });
        try {
          found = (db.prepare('SELECT k FROM t').all() as { k: string }[]).map((r) => r.k);
        } catch {
          found = []; // the table itself may not be checkpointed yet
        } finally {
          db.close();
        }
      }
      expect(found).toEqual(['durable']);
    });

    it('a unit that changes many pages keeps its savepoint journal in memory (no temporary file) and still rolls back alone', async () => {
      const s = await open();
      const writes = writeTransactions(s.db, 'sqlite');
      // 60 rows of 3 KB, about one 4 KiB page each, committed first: a savepoint journals pages that
      // existed when it began, and 60 pages are well past SQLite's 64 KiB before it spills to a file.
      const big = 'x'.repeat(3000);
      await writes(async (trx) => {
        for (let i = 0; i < 60; i++) await sql`INSERT INTO t (k, v) VALUES (${`k${i}`}, ${big})`.execute(trx);
      });
      // SQLite names its temporary files etilqs_* and unlinks them at once; an open one shows in /proc.
      const temporaryFiles = () =>
        readdirSync('/proc/self/fd').flatMap((fd) => {
          try {
            const target = readlinkSync(join('/proc/self/fd', fd));
            return target.includes('etilqs_') ? [target] : [];
          } catch {
            return []; // closed between the listing and the read
          }
        });
      let openDuringUnit: string[] = ['not looked'];
      const outcomes = await Promise.allSettled([
        writes(async (trx) => {
          await sql`UPDATE t SET v = ${'y'.repeat(3000)}`.execute(trx);
          openDuringUnit = temporaryFiles();
          throw new Error('rule broken after the update');
        }),
        writes((trx) => sql`INSERT INTO t (k, v) VALUES ('after', 'x')`.execute(trx)),
      ]);
      expect(openDuringUnit).toEqual([]);
      expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'fulfilled']);
      const values = await sql<{ v: string }>`SELECT DISTINCT v FROM t WHERE k != 'after'`.execute(s.db);
      expect(values.rows.map((r) => r.v)).toEqual([big]);
    });
  },
);

describe('time-ordered uuids (version 7) for rows of the create path', () => {
  it('are RFC 9562 version 7, variant 10, and sort by creation time', () => {
    const a = timeOrderedUuid(1_700_000_000_000);
    const b = timeOrderedUuid(1_700_000_000_001);
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(a.slice(0, 13)).toBe('018bcfe5-6800');
    expect(a < b).toBe(true);
    expect(new Set(Array.from({ length: 1000 }, () => timeOrderedUuid(1)).values()).size).toBe(1000);
  });

  it('made in one millisecond, sort in the order they were made (a counter, not random bits, after the time)', () => {
    // More than the 12-bit counter holds in one millisecond: the overflow takes the next one.
    const ids = Array.from({ length: 5000 }, () => timeOrderedUuid(1_800_000_000_000));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // A clock a little behind the last id continues after it; a date far from it starts its own count.
    const later = timeOrderedUuid(1_800_000_000_000 - 5);
    expect(later > (ids.at(-1) as string)).toBe(true);
    expect(timeOrderedUuid(1_700_000_000_000).slice(0, 13)).toBe('018bcfe5-6800');
  });
});
