/**
 * A PHP single-quoted string literal holding exactly value. Inside single quotes PHP gives meaning
 * to two sequences only, \' and \\, so escaping backslash and quote is complete: no variable
 * interpolation, no other escapes. NUL passes through unchanged (PHP strings are binary-safe).
 */
export function phpString(value: string): string {
  return `'${value.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}
