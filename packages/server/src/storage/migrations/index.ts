import type { Migration } from 'kysely';
import * as m001 from './001_initial.js';

/** Numbered, forward-only; the same list for SQLite and PostgreSQL. */
export const migrations: Record<string, Migration> = {
  '001_initial': m001,
};
