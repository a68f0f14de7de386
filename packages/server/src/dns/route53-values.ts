/**
 * Route 53's text forms: TXT values travel in zone-file syntax (quoted strings of at most 255
 * characters each), and names come back with special characters as octal escapes (`\052` for `*`).
 */

/** `abc` → `"abc"`; longer values become several quoted strings, as one string holds at most 255 characters. */
export function quoteTxt(value: string): string {
  const chunks = value.match(/[\s\S]{1,255}/g) ?? [''];
  return chunks.map((chunk) => `"${chunk.replace(/["\\]/g, (c) => `\\${c}`)}"`).join(' ');
}

/** The inverse of quoteTxt: `"ab" "c"` → `abc`. Unquoted values (other tools write those) are kept as they are. */
export function unquoteTxt(wire: string): string {
  const strings = [...wire.matchAll(/"((?:[^"\\]|\\.)*)"/g)];
  if (strings.length === 0) return wire;
  return strings.map((m) => (m[1] ?? '').replace(/\\(\d{3}|.)/g, (_, e: string) => unescapeOne(e))).join('');
}

/** `\052.example.com.` → `*.example.com.` */
export function unescapeName(name: string): string {
  return name.replace(/\\(\d{3})/g, (_, digits: string) => String.fromCharCode(Number.parseInt(digits, 8)));
}

function unescapeOne(sequence: string): string {
  return /^\d{3}$/.test(sequence) ? String.fromCharCode(Number.parseInt(sequence, 8)) : sequence;
}
