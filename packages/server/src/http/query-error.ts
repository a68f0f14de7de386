import type { FieldError } from '@siteplane/contract';
import { ValidationError } from '../domain/field-errors.js';

/** A query parameter violated a rule: 400 invalid_query rather than 422 (ARCHITECTURE §2 Errors). */
export class QueryError extends Error {
  constructor(readonly errors: FieldError[]) {
    super('invalid query');
    this.name = 'QueryError';
  }

  static async wrapAsync<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof ValidationError) throw new QueryError(error.errors);
      throw error;
    }
  }

  static wrap<T>(fn: () => T): T {
    try {
      return fn();
    } catch (error) {
      if (error instanceof ValidationError) throw new QueryError(error.errors);
      throw error;
    }
  }
}
