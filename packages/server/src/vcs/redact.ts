/**
 * Keeps credentials out of error messages. Provider bodies and git's stderr are quoted in errors so
 * users see what went wrong; both may echo a URL with a password in it, and nothing guarantees a
 * provider never echoes a token, so every such text passes through here first.
 */

/** `https://user:secret@host/x` → `https://***@host/x` (any scheme, also inside longer text). */
export function stripUrlCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/@\s'"]+@/gi, '$1***@');
}

/** Replaces every occurrence of each secret (and URL credentials) with `***`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = stripUrlCredentials(text);
  // Longest first, so a secret that contains another is removed whole.
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length >= 4) out = out.split(secret).join('***');
  }
  return out;
}

/** A provider's or git's text shortened to one line of reasonable length, redacted. */
export function quote(text: string, secrets: readonly string[], max = 200): string {
  const oneLine = redact(text, secrets).replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max)}…` : oneLine;
}
