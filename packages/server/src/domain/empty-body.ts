import { isPlainObject, ValidationError } from './field-errors.js';

/**
 * The body of an action that takes no input (retry a certificate, retry a site): nothing or `{}`.
 * Anything else is refused rather than ignored, each unknown field named, so a client that thinks
 * it chose something learns it did not.
 */
export function checkEmptyBody(body: unknown): void {
  if (body === undefined || body === null) return;
  if (!isPlainObject(body))
    throw new ValidationError([{ field: '', code: 'invalid_type', message: 'The body must be empty or {}.' }]);
  const fields = Object.keys(body);
  if (fields.length > 0) {
    throw new ValidationError(
      fields.map((field) => ({ field, code: 'unknown_field' as const, message: `"${field}" is not accepted here.` })),
    );
  }
}
