import type { TSchema } from '@sinclair/typebox';
import { type TypeCheck, TypeCompiler } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import type { FieldError } from '@siteplane/contract';
import { registerFormats } from './schema-formats.js';

const compiled = new WeakMap<TSchema, TypeCheck<TSchema>>();

/** Every violation of a TypeBox schema (up to `limit`), one per dotted field path, with a stable code. */
export function schemaErrors(schema: TSchema, value: unknown, limit: number): FieldError[] {
  let check = compiled.get(schema);
  if (!check) {
    registerFormats();
    check = TypeCompiler.Compile(schema);
    compiled.set(schema, check);
  }
  if (check.Check(value)) return [];
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  for (const e of check.Errors(value)) {
    // A body of 40,000 unknown fields answers with the first hundred.
    if (errors.length >= limit) break;
    const field = e.path.replace(/^\//, '').replace(/\//g, '.');
    if (seen.has(field)) continue;
    seen.add(field);
    errors.push({ field, code: codeOf(e.type, e.value), message: e.message });
  }
  return errors;
}

function codeOf(type: ValueErrorType, value: unknown): FieldError['code'] {
  if (value === undefined) return 'required';
  switch (type) {
    case ValueErrorType.ObjectAdditionalProperties:
      return 'unknown_field';
    case ValueErrorType.StringMinLength:
      return 'too_short';
    case ValueErrorType.StringMaxLength:
      return 'too_long';
    case ValueErrorType.StringPattern:
    case ValueErrorType.StringFormat:
      return 'invalid_format';
    case ValueErrorType.IntegerMinimum:
    case ValueErrorType.IntegerMaximum:
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.NumberMaximum:
      return 'out_of_range';
    case ValueErrorType.Union:
    case ValueErrorType.Literal:
      return 'invalid_value';
    default:
      return 'invalid_type';
  }
}
