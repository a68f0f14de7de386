import { createHash } from 'node:crypto';
import { type FieldError, MAX_ENV_KEYS } from '@siteplane/contract';

/** All values of a site together: the environment is written into a file on every deploy. */
export const MAX_ENV_TOTAL_BYTES = 256 * 1024;

/**
 * Rules of an environment PATCH beyond each key's shape (the schema checks names and sizes): a
 * key both set and unset is ambiguous; the result may hold at most MAX_ENV_KEYS keys and
 * MAX_ENV_TOTAL_BYTES of values.
 */
export function checkEnvironmentPatch(
  existing: { key: string; bytes: number }[],
  set: Record<string, { value: string }>,
  unset: string[],
): FieldError[] {
  const errors: FieldError[] = [];
  unset.forEach((key, i) => {
    if (key in set) errors.push({ field: `unset.${i}`, code: 'conflicting_values', message: `${key} is both set and unset.` });
  });
  const sizes = new Map(existing.map((e) => [e.key, e.bytes]));
  for (const key of unset) sizes.delete(key);
  for (const [key, { value }] of Object.entries(set)) sizes.set(key, Buffer.byteLength(value, 'utf8'));
  if (sizes.size > MAX_ENV_KEYS)
    errors.push({ field: 'set', code: 'out_of_range', message: `A site may have at most ${MAX_ENV_KEYS} variables.` });
  const total = [...sizes.values()].reduce((a, b) => a + b, 0);
  if (total > MAX_ENV_TOTAL_BYTES)
    errors.push({ field: 'set', code: 'too_long', message: `A site's values may total at most ${MAX_ENV_TOTAL_BYTES} bytes.` });
  return errors;
}

/**
 * A fingerprint of the environment a deploy ran with: compared on rollback ("the environment
 * changed since that release") and at a deploy's success (deploy_needed cleared only when nothing
 * changed since it started). Salted per site so equal values on two sites do not look alike.
 */
export function environmentHash(siteUuid: string, variables: { key: string; scope: string; value: string }[]): string {
  const h = createHash('sha256').update(`siteplane-env:${siteUuid}\n`);
  for (const v of [...variables].sort((a, b) => (a.key < b.key ? -1 : 1)))
    h.update(`${v.key}\u0000${v.scope}\u0000${v.value.length}\u0000${v.value}\u0000`);
  return h.digest('hex');
}
