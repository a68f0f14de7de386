import { FormatRegistry } from '@sinclair/typebox';
import { UUID_RE } from './field-errors.js';

/** TypeBox knows no string formats until they are registered; these are the ones the schemas use. */
export function registerFormats(): void {
  if (!FormatRegistry.Has('uuid')) FormatRegistry.Set('uuid', (v) => UUID_RE.test(v));
  if (!FormatRegistry.Has('email')) FormatRegistry.Set('email', (v) => /^[^\s@]{1,64}@[A-Za-z0-9.-]+\.[A-Za-z]{2,}$/.test(v));
  if (!FormatRegistry.Has('uri'))
    FormatRegistry.Set('uri', (v) => {
      try {
        const u = new URL(v);
        return u.protocol === 'https:' || u.protocol === 'http:';
      } catch {
        return false;
      }
    });
}
