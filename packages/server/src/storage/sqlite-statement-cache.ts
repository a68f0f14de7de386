import type SQLite from 'better-sqlite3';

/**
 * Kysely prepares every query anew; on better-sqlite3 preparing costs as much as running a small
 * query. This wraps the database so each distinct SQL text is prepared once (Kysely's SQL text
 * carries only placeholders, so the number of distinct texts stays small).
 */
export function withStatementCache(db: SQLite.Database, max = 500): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = (source: string) => {
    let statement = cache.get(source);
    if (!statement) {
      statement = db.prepare(source);
      if (cache.size >= max) cache.delete(cache.keys().next().value as string);
      cache.set(source, statement);
    }
    return statement;
  };
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop === 'prepare') return prepare;
      const value = Reflect.get(target, prop, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
