import type { FieldError } from '@siteplane/contract';
import { MAX_REPORTED_ERRORS } from './body-shape.js';
import { QueryError } from './query-error.js';

/**
 * Every query parameter is one string: the router hands a parameter given twice (`?server=a&server=b`)
 * over as an array, which no handler reads, and a NUL cannot be stored or compared in PostgreSQL
 * text. Both are a 400 invalid_query naming the parameter. Parameters no route reads are ignored,
 * whatever their name (`a[]`, `a[b]`).
 */
export function assertQueryShape(query: unknown): void {
  if (typeof query !== 'object' || query === null) return;
  const errors: FieldError[] = [];
  for (const [name, value] of Object.entries(query)) {
    if (errors.length >= MAX_REPORTED_ERRORS) break;
    if (typeof value !== 'string')
      errors.push({ field: name, code: 'duplicate', message: `${name} must be given at most once.` });
    else if (value.includes('\0') || name.includes('\0'))
      errors.push({ field: name, code: 'invalid_characters', message: 'must not contain NUL characters' });
  }
  if (errors.length) throw new QueryError(errors);
}
