/**
 * Host names as the service accepts them: ASCII only (internationalised names in their xn-- form),
 * so that look-alike characters can never reach nginx or a certificate unnoticed.
 */
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

export function hostnameProblem(value: string): string | undefined {
  if (value.length > 253) return 'must be at most 253 characters';
  if (!/^[\x21-\x7e]+$/.test(value)) return 'must be an ASCII host name (use the xn-- form for international names)';
  const labels = value.split('.');
  if (labels.length < 2) return 'must have at least two labels, as in example.com';
  for (const label of labels) {
    if (!LABEL.test(label)) return `label "${label}" must be 1-63 letters, digits or inner hyphens`;
  }
  if (/^[0-9]+$/.test(labels[labels.length - 1] ?? '')) return 'must not be an IP address';
  return undefined;
}

export function normaliseHostname(value: string): string {
  return value.trim().toLowerCase().replace(/\.$/, '');
}
