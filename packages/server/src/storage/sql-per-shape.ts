import type { CompiledQuery, Kysely } from 'kysely';
import type { Database } from './schema.js';

/** SQL text per dialect adapter and shape; null where the shortcut does not apply. */
const kept = new WeakMap<object, Map<string, string | null>>();

function textsOf(db: Kysely<Database>): Map<string, string | null> {
  const adapter = db.getExecutor().adapter;
  let texts = kept.get(adapter);
  if (!texts) {
    texts = new Map();
    kept.set(adapter, texts);
  }
  return texts;
}

/**
 * The SQL Kysely compiled for this shape before (a string), null when that shape must always go
 * through the builder, undefined when it has not been compiled yet. Shared by `insertRow` and
 * `selectPerShape`: one store per dialect adapter, so SQLite's and PostgreSQL's texts never mix.
 */
export function sqlOfShape(db: Kysely<Database>, shape: string): string | null | undefined {
  return textsOf(db).get(shape);
}

/**
 * Keeps the first compilation of a shape: its SQL when the parameters Kysely compiled are exactly
 * `parameters` (so the text can be sent again with another call's values), else null, which sends
 * that shape through the builder every time (slower, never wrong). Returns what was kept.
 */
export function keepSqlOfShape(
  db: Kysely<Database>,
  shape: string,
  query: CompiledQuery,
  parameters: readonly unknown[],
): string | null {
  const same = query.parameters.length === parameters.length && query.parameters.every((p, i) => p === parameters[i]);
  const text = same ? query.sql : null;
  textsOf(db).set(shape, text);
  return text;
}
