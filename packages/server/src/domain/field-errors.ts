import type { FieldCode, FieldError } from '@siteplane/contract';

/** Collects every violation of a request so they can be reported at once (ARCHITECTURE §2 Errors). */
export class FieldErrors {
  readonly list: FieldError[] = [];
  add(field: string, code: FieldCode, message: string): void {
    this.list.push({ field, code, message });
  }
  has(field: string): boolean {
    return this.list.some((e) => e.field === field || e.field.startsWith(`${field}.`));
  }
  get empty(): boolean {
    return this.list.length === 0;
  }
}

/** A rule of the interface was broken; carries every violated field. */
export class ValidationError extends Error {
  constructor(readonly errors: FieldError[]) {
    super(errors.map((e) => `${e.field}: ${e.message}`).join('; '));
    this.name = 'ValidationError';
  }
}

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
