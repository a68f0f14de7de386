import type { FieldError } from '@siteplane/contract';

/** Arrays and objects nested deeper than this are refused: no field of the API nests past a handful. */
export const MAX_BODY_DEPTH = 64;
/** A body may repeat one mistake a hundred thousand times; the answer lists the first ones only. */
export const MAX_REPORTED_ERRORS = 100;

export type BodyShape = { tooDeep: true } | { tooDeep: false; errors: FieldError[] };

/**
 * Checks a parsed body before anything else reads it: its nesting depth, and every string (or key)
 * that contains NUL. No field of the API may hold one: it cannot reach a shell argument, PostgreSQL
 * rejects it in text, and C tools truncate at it. The walk keeps its own stack: a recursive one
 * overflows the call stack on a body of 20,000 nested arrays, which JSON.parse reads without
 * trouble. At most MAX_REPORTED_ERRORS errors are reported.
 */
export function checkBodyShape(root: unknown): BodyShape {
  const errors: FieldError[] = [];
  const report = (error: FieldError) => {
    if (errors.length < MAX_REPORTED_ERRORS) errors.push(error);
  };
  // `quiet`: under a field name with NUL, which is reported in place of its value; depth still counts.
  const stack: { value: unknown; path: string; depth: number; quiet: boolean }[] = [
    { value: root, path: '', depth: 0, quiet: false },
  ];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, path, depth, quiet } = item;
    if (typeof value === 'string') {
      if (!quiet && value.includes('\0'))
        report({ field: path, code: 'invalid_characters', message: 'must not contain NUL characters' });
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    if (depth >= MAX_BODY_DEPTH) return { tooDeep: true };
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value);
    const children: typeof stack = [];
    for (const [key, child] of entries) {
      const childPath = path ? `${path}.${key}` : key;
      const badKey = !quiet && key.includes('\0');
      if (badKey)
        report({ field: childPath, code: 'invalid_characters', message: 'field names must not contain NUL characters' });
      children.push({ value: child, path: childPath, depth: depth + 1, quiet: quiet || badKey });
    }
    // Pushed last to first, so the first field is looked at first.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i] as (typeof stack)[number]);
  }
  return { tooDeep: false, errors };
}
