import type { TSchema } from '@sinclair/typebox';
import { ValidationError } from '../domain/field-errors.js';
import { schemaErrors } from '../domain/schema-errors.js';
import { MAX_REPORTED_ERRORS } from './body-shape.js';

/** Validates against a TypeBox schema and reports every violation (up to a hundred) with its dotted field path. */
export function assertMatches(schema: TSchema, value: unknown): void {
  const errors = schemaErrors(schema, value, MAX_REPORTED_ERRORS);
  if (errors.length) throw new ValidationError(errors);
}
