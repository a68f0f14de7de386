/**
 * Reading provider JSON without trusting its shape: a body that is not what the provider
 * documents is a provider_error, never a silently empty list or a branch without a name.
 */
import { VcsError } from './provider.js';

type Json = Record<string, unknown>;

export function asObject(provider: string, value: unknown, what: string): Json {
  if (value && typeof value === 'object' && !Array.isArray(value)) return value as Json;
  throw new VcsError('provider_error', `${provider} sent ${what} that is not a JSON object`);
}

export function asArray(provider: string, value: unknown, what: string): unknown[] {
  if (Array.isArray(value)) return value;
  throw new VcsError('provider_error', `${provider} sent ${what} that is not a JSON array`);
}

/** A string at a path of keys (`text(repo, 'mainbranch', 'name')`), or null. */
export function text(value: unknown, ...path: string[]): string | null {
  let current: unknown = value;
  for (const key of path) {
    if (!current || typeof current !== 'object') return null;
    current = (current as Json)[key];
  }
  return typeof current === 'string' && current.length > 0 ? current : null;
}

export function flag(value: unknown, key: string): boolean | null {
  const found = value && typeof value === 'object' ? (value as Json)[key] : undefined;
  return typeof found === 'boolean' ? found : null;
}

/** A string the record cannot do without (a repository's or branch's name). */
export function requiredText(provider: string, value: unknown, what: string, ...path: string[]): string {
  const found = text(value, ...path);
  if (found === null) throw new VcsError('provider_error', `${provider} sent ${what} without ${path.join('.')}`);
  return found;
}
