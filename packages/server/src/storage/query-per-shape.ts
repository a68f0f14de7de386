import { type Compilable, CompiledQuery, type Kysely, type QueryResult } from 'kysely';
import type { Database } from './schema.js';
import { keepSqlOfShape, sqlOfShape } from './sql-per-shape.js';

/**
 * Runs a query that Kysely builds, built and compiled once per shape (`insertRow` uses it for
 * inserts): on the create path and in a job's steps, Kysely's building and compiling of a statement
 * was more than the SQLite work itself. `shape` names everything that changes the SQL text (the
 * call site, how many values an IN list has, which optional parts and which columns are there);
 * `parameters` are this call's values in the order the SQL takes them. The first call of a shape
 * builds the query, and its SQL is kept only if the parameters Kysely compiled are exactly these
 * values: a wrong order, or a value Kysely would write into the SQL, sends that shape through the
 * builder every time (slower, never wrong).
 */
export async function queryPerShape<Row>(
  db: Kysely<Database>,
  shape: string,
  parameters: readonly unknown[],
  build: () => Compilable<Row>,
): Promise<QueryResult<Row>> {
  const text = sqlOfShape(db, shape);
  if (typeof text === 'string') return db.executeQuery<Row>(CompiledQuery.raw(text, [...parameters]));
  const query = build().compile();
  if (text === undefined) keepSqlOfShape(db, shape, query, parameters);
  return db.executeQuery(query);
}

/** `queryPerShape` for a select: its rows. */
export async function selectPerShape<Row>(
  db: Kysely<Database>,
  shape: string,
  parameters: readonly unknown[],
  build: () => Compilable<Row>,
): Promise<Row[]> {
  return (await queryPerShape(db, shape, parameters, build)).rows;
}

/** Whether a shape's SQL is reused (tests: the shortcut is taken where it is meant to be). */
export function reusesShape(db: Kysely<Database>, shape: string): boolean {
  return typeof sqlOfShape(db, shape) === 'string';
}
