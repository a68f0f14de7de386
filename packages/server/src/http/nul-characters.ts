import type { FieldError } from '@siteplane/contract';

/**
 * Paths of every string (or key) in a parsed body that contains NUL. No field of the API may hold
 * one: it cannot reach a shell argument, PostgreSQL rejects it in text, and C tools truncate at it.
 */
export function nulCharacterErrors(value: unknown, path = ''): FieldError[] {
  if (typeof value === 'string') {
    return value.includes('\0') ? [{ field: path, code: 'invalid_characters', message: 'must not contain NUL characters' }] : [];
  }
  if (typeof value !== 'object' || value === null) return [];
  const errors: FieldError[] = [];
  const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
  for (const [key, child] of entries) {
    const childPath = path ? `${path}.${key}` : key;
    if (key.includes('\0'))
      errors.push({ field: childPath, code: 'invalid_characters', message: 'field names must not contain NUL characters' });
    else errors.push(...nulCharacterErrors(child, childPath));
  }
  return errors;
}
