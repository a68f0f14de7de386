/**
 * Repository names as the API takes them: `<owner>/<repo>`, deeper for GitLab subgroups. A name
 * is checked before it becomes part of a provider URL, so `..` or an empty segment can never
 * address another endpoint; a name that cannot exist is simply not found.
 */
import { VcsError } from './provider.js';

const SEGMENT = /^[A-Za-z0-9_.-]+$/;

/** The name's segments, or VcsError('not_found') when it cannot name a repository. */
export function splitRepoName(provider: string, name: string, depth: { min: number; max: number }): string[] {
  const segments = name.split('/');
  const valid =
    segments.length >= depth.min &&
    segments.length <= depth.max &&
    segments.every((segment) => SEGMENT.test(segment) && segment !== '.' && segment !== '..');
  if (!valid) {
    const shape = depth.max === depth.min ? '<owner>/<repo>' : '<group>/…/<repo>';
    throw new VcsError(
      'not_found',
      `${provider} has no repository named ${JSON.stringify(name.slice(0, 200))} (expected ${shape})`,
    );
  }
  return segments;
}

/** `owner/repo` → `owner/repo` with each segment percent-encoded for a URL path. */
export function encodeSegments(segments: readonly string[]): string {
  return segments.map(encodeURIComponent).join('/');
}
