/**
 * Translates a driver's unique-constraint error (SQLite or PostgreSQL) into the name of the index or
 * columns that were violated, at the storage edge, so use cases can name the field.
 */
export function uniqueViolation(error: unknown): string | null {
  if (typeof error !== 'object' || error === null) return null;
  const e = error as { code?: string; message?: string; constraint?: string };
  if (e.code === '23505') return e.constraint ?? 'unique';
  if (e.code === 'SQLITE_CONSTRAINT_UNIQUE' || e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
    // "UNIQUE constraint failed: sites.server_uuid, sites.domain"
    return (e.message ?? '').replace(/^.*failed: /, '');
  }
  return null;
}
